/**
 * Collects every problem found while compiling a routing table, so one failed load reports all
 * of them at once (each with its config path) instead of the first only.
 */
import type { z } from 'zod';
import { SwitchboardError } from '../../src/base/errors.ts';
import { formatIssues } from '../../src/config/errors.ts';

/** An accumulator of `path: message` problems. */
export class Issues {
  readonly list: string[] = [];

  /** Records one problem at a config path (`products.web.basicRules[0].hosts[1]`). */
  add(path: string, message: string): void {
    this.list.push(path === '' ? message : `${path}: ${message}`);
  }

  /**
   * Records every zod issue in the config's format (src/config/errors.ts formatIssues, the one
   * formatter: a missing key, a wrong type in plain words); with the `schema` that was parsed,
   * unknown keys and bad enum values get "did you mean".
   */
  addZod(error: z.ZodError, prefix: string, schema?: z.ZodType): void {
    this.list.push(...formatIssues(error.issues, prefix, schema));
  }

  /** Throws one SwitchboardError listing every problem, if there is any. */
  throwIfAny(where: string): void {
    if (this.list.length === 0) return;
    const head = where === '' ? '' : `${where}: `;
    // `errors`: the same problems one per line, for `check` and the CLI (src/config/errors.ts problemLines).
    const errors = this.list.map((l) => `${head}${l}`);
    throw Object.assign(new SwitchboardError('SWB_ERR_CONFIG', `${head}${this.list.join('; ')}`), { errors });
  }
}

/** `a.b[2].c` from a prefix and a path of keys and indexes. */
export function joinPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
