/**
 * What `startLoaded` (start.ts) has started, closed last started first, as avvio closes plugins:
 *
 * 1. Each part is recorded the moment it has started, with how it closes (`add`). A part that
 *    starts later but must close at an earlier place has that place reserved before the parts
 *    that must close first (`reserve`): the admin listener answers `/readyz` while the panel
 *    drains, so its place is below the panel's.
 * 2. A start that fails anywhere unwinds the stack (`abort`): each part's `abort` (the panel
 *    destroys its connections at once) or else its `close`, last started first. A part that
 *    fails to close is logged and the others still close; the start's own error is what the
 *    caller sees.
 * 3. Shutdown (`close`) runs every part's `close`, last started first: readiness off, the
 *    reloader, the ACME manager, the fleet (its member key revoked), the panel (the drain), the
 *    admin listener, the metrics, the runtime. A failure is logged, the rest still close, and
 *    the first one is thrown at the end.
 */
import type { Logger } from '../src/base/log.ts';

type Step = () => unknown;

/** One part: its name (in the debug log) and how it closes; a reserved place has no close until its part starts. */
interface Part {
  readonly name: string;
  close: Step | undefined;
  /** After a failed start, instead of `close`. */
  abort: Step | undefined;
}

/** The stack of started parts of one router. */
export class StartedParts {
  readonly #parts: Part[] = [];
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Records that `name` has started; `abort`, if given, replaces `close` when the start fails. */
  add(name: string, close: Step, abort?: Step): void {
    this.#parts.push({ name, close, abort });
  }

  /**
   * Reserves the place of a part that starts later (nothing to close until then); the returned
   * function records its close there once it has started.
   */
  reserve(name: string): (close: Step, abort?: Step) => void {
    const part: Part = { name, close: undefined, abort: undefined };
    this.#parts.push(part);
    return (close, abort) => {
      part.close = close;
      part.abort = abort;
    };
  }

  /** After a failed start: every part's abort (or close), last started first; failures logged. */
  async abort(): Promise<void> {
    for (const part of this.#started()) {
      try {
        await (part.abort ?? part.close)();
        this.#logger.debug({ part: part.name }, 'start failed: closed');
      } catch (err) {
        this.#logger.error({ err, part: part.name }, 'start failed: closing failed too');
      }
    }
  }

  /** Shutdown: every part's close, last started first; the first failure is thrown after all ran. */
  async close(): Promise<void> {
    let first: { error: unknown } | undefined;
    for (const part of this.#started()) {
      try {
        await part.close();
        this.#logger.debug({ part: part.name }, 'closed');
      } catch (err) {
        this.#logger.error({ err, part: part.name }, 'closing failed');
        first ??= { error: err };
      }
    }
    if (first !== undefined) throw first.error;
  }

  /** The started parts, last first, taken off the stack (a second close finds none). */
  #started(): (Part & { close: Step })[] {
    return this.#parts
      .splice(0)
      .reverse()
      .filter((p): p is Part & { close: Step } => p.close !== undefined);
  }
}
