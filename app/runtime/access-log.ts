/**
 * The runtime's access log (issue 44 item 3): the destination `log.access` names (stdout, a
 * file, off) or one injected (a worker thread's forwarder, a test's array), with the rules of
 * `log.access.rules` in front (src/access-log/).
 *
 * 1. The rules run where the lines are written: on the runtime's own destination, and on an
 *    injected one only when asked (`rules: true`, tests). A worker thread's forwarder gets every
 *    line and the main thread, which writes them, judges and counts the lines of all threads.
 * 2. A reload compiles the new rules before the engine swap (`prepare`, which throws on a bad
 *    rule so the reload is refused) and applies them with the new destination after it; the
 *    counts (`counts`, for /metrics) outlive reloads.
 * 3. `log.accessFormat` (json, combined, pretty; src/access-log/format.ts) is how the runtime's
 *    own destination writes a line; an injected log gets records, not text. A reload that
 *    changes the format or the target makes a new destination (the old one is flushed).
 * 4. `sample:` draws from a generator of its own (mulberry32), seeded once from the runtime's
 *    `random`: a test that seeds the runtime gets the same sampled lines every run, and the
 *    operators' draws do not shift it.
 */

import {
  AccessLogCounts,
  accessLineFormatter,
  compileAccessRules,
  ruledAccessLog,
} from '../../src/access-log/index.ts';
import { type AccessLog, type AccessRecord, createAccessLog, type ReopenableAccessLog } from '../../src/base/log.ts';
import { type Random, seededRandom } from '../../src/base/random.ts';
import type { Config } from '../../src/config/schema.ts';

/** The destination `config` names, writing lines in its `log.accessFormat`. */
function destinationOf(config: Config): ReopenableAccessLog {
  const { access, accessFormat } = config.log;
  return createAccessLog(access, accessLineFormatter(accessFormat, access));
}

/** What names a destination: its target and format (another one makes a new destination). */
function destinationKey(config: Config): string {
  return `${config.log.accessFormat} ${config.log.access}`;
}

/** Where the rules' errors point. */
export const ACCESS_RULES_PATH = 'log.access.rules';

/** The access log of one runtime across reloads. */
export class AccessLogs {
  /** Lines written and skipped by rule, since start (/metrics). */
  readonly counts = new AccessLogCounts();
  readonly #injected: boolean;
  readonly #rules: boolean;
  readonly #random: Random;
  #target: ReopenableAccessLog;
  #targetName: string;
  #log: ReopenableAccessLog;

  constructor(config: Config, injected: AccessLog | undefined, options: { rules: boolean; random: Random }) {
    this.#injected = injected !== undefined;
    this.#rules = options.rules;
    this.#random = seededRandom(Math.floor(options.random() * 2 ** 32));
    this.#targetName = destinationKey(config);
    this.#target =
      injected === undefined
        ? destinationOf(config)
        : Object.assign((r: AccessRecord) => injected(r), { reopen() {}, flush() {} });
    this.#log = this.#ruled(this.#target, config);
  }

  /** The log panels write to. */
  get log(): ReopenableAccessLog {
    return this.#log;
  }

  /**
   * Compiles `config`'s rules (throws a SwitchboardError naming the rule) and returns the step
   * that switches to them, and to a new destination if `log.access` names another or
   * `log.accessFormat` changed (the old one is flushed).
   */
  prepare(config: Config): () => void {
    const sameTarget = this.#injected || destinationKey(config) === this.#targetName;
    const target = sameTarget ? this.#target : undefined;
    // Compiled against the current target's `off`; a new target is made only on commit.
    const rules = this.#rules ? this.#compile(config) : undefined;
    return () => {
      const previous = this.#target;
      if (target === undefined) {
        this.#target = destinationOf(config);
        this.#targetName = destinationKey(config);
        previous.flush();
      }
      this.#log = rules === undefined ? this.#target : ruledAccessLog(this.#target, rules);
    };
  }

  /** Flushes pending lines (shutdown). */
  flush(): void {
    this.#target.flush();
  }

  #ruled(target: ReopenableAccessLog, config: Config): ReopenableAccessLog {
    return this.#rules ? ruledAccessLog(target, this.#compile(config)) : target;
  }

  #compile(config: Config) {
    return compileAccessRules(config.log.accessRules, {
      where: ACCESS_RULES_PATH,
      random: this.#random,
      counts: this.counts,
    });
  }
}
