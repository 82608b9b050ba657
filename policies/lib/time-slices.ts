/**
 * Long work on the event loop in slices: `pause()` yields to the event loop (one
 * `setImmediate`) once the current slice has run `ms` milliseconds, so timers and sockets are
 * served between slices. Callers call it every few thousand steps.
 */

/** A budget of `ms` per slice. */
export class TimeSlices {
  readonly #ms: number;
  #until: number;
  constructor(ms: number) {
    this.#ms = ms;
    this.#until = performance.now() + ms;
  }

  /** Yields when the slice is spent; otherwise returns at once. */
  async pause(): Promise<void> {
    if (performance.now() < this.#until) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#until = performance.now() + this.#ms;
  }
}
