/**
 * Time-sliced builds: a long synchronous build written as a generator that `yield`s between
 * units of work, run either to the end at once (`runToEnd`) or in slices of `SLICE_MS`
 * with a `setImmediate` between them (`runSliced`), so connections and timers get their turn
 * while a 10,000-host snapshot is compiled. The build itself never awaits: what it produces is
 * the same either way, and nothing the engine reads is touched until the caller swaps.
 *
 *   event loop:  [requests, timers][slice ≤ sliceMs][requests, timers][slice] … [slice][requests] → snapshot
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * The work of one slice, in milliseconds: a turn that runs a slice may also hold a scavenge
 * (the build allocates) and the traffic's own work, so the slice is half of the ~4 ms a reload
 * turn may take (bench/README.md, reloads under load).
 */
export const SLICE_MS = 2;

/** A build that yields between units of work and returns `T`. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end in the current turn. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Runs `steps` in slices of about `sliceMs` (default `SLICE_MS`), yielding the event loop
 * between slices. The first slice starts in a turn of its own and the caller resumes in a turn
 * of its own: a slice never shares its turn with the work before (a file's parse, the previous
 * reload's swap) or after.
 */
export async function runSliced<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  for (;;) {
    await nextTurn();
    const until = performance.now() + sliceMs;
    for (;;) {
      const r = steps.next();
      if (r.done) {
        await nextTurn();
        return r.value;
      }
      if (performance.now() >= until) break;
    }
  }
}

/**
 * `JSON.stringify(value)` as steps: objects and arrays down to `depth` levels are written member
 * by member with a `yield` between members, deeper values in one `JSON.stringify` each. The text
 * is the same as `JSON.stringify(value)` for plain data (no `toJSON`, no cycles).
 */
export function* stringifySteps(value: unknown, depth = 2): Steps<string> {
  if (depth === 0 || value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      parts.push(item === undefined || typeof item === 'function' ? 'null' : yield* stringifySteps(item, depth - 1));
      yield;
    }
    return `[${parts.join(',')}]`;
  }
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    parts.push(`${JSON.stringify(key)}:${yield* stringifySteps(item, depth - 1)}`);
    yield;
  }
  return `{${parts.join(',')}}`;
}
