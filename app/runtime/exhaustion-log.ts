/**
 * The rate-limited "out of file descriptors" log line. The upstream pipeline reports every
 * connect that failed with EMFILE/ENFILE (`noteExhausted`); the runtime logs at most one line
 * per EXHAUSTED_LOG_MS with how many failed since the last one, so a descriptor storm cannot
 * flood the log.
 */
import type { Logger } from '../../src/base/log.ts';
import { nofileLimit } from '../../src/process/nofile.ts';

/** Minimum time between two "descriptors exhausted" log lines. */
const EXHAUSTED_LOG_MS = 10_000;

/** Counts descriptor-exhausted connects and logs them, at most once per 10 s. */
export class ExhaustionLog {
  readonly #logger: Logger;
  #last = 0;
  #since = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** One connect failed for lack of descriptors. */
  note(): void {
    this.#since++;
    const now = Date.now();
    if (now - this.#last < EXHAUSTED_LOG_MS) return;
    this.#last = now;
    this.#logger.error(
      { failedConnects: this.#since, nofile: nofileLimit() },
      'out of file descriptors: upstream connects are failing (EMFILE/ENFILE); new accepts are being shed',
    );
    this.#since = 0;
  }
}
