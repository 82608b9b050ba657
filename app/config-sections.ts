/**
 * The sections of a config that are valid on their own (issue 45 item 5), so that config load
 * (`check`, start and reload alike) runs every further check on what parsed, even when other
 * sections have errors, and says which checks it could not run:
 *
 * 1. A top-level key named by an issue of the whole parse is a bad section; a config that is not
 *    a mapping has every section bad. An unknown top-level key marks none (it is not a section).
 * 2. The sections left are parsed again as a whole config, a bad `listeners` replaced by a
 *    stand-in (a config needs one) and the other bad sections left out (their defaults): this
 *    runs the cross-section rules of the schema, which zod skips when a section has a type
 *    error. Their issues are errors the whole parse did not report; their sections become bad
 *    and the parse is repeated, so it ends in at most one round per section.
 * 3. A further check names the sections it reads; `unmet` says why it cannot run
 *    (`policies not compiled: fleet has errors`), the caller lists those lines as skipped.
 */
import type { z } from 'zod';
import { formatIssues } from '../src/config/errors.ts';
import { type Config, configSchema } from '../src/config/schema.ts';

/** A top-level key of the config. */
export type Section = keyof typeof configSchema.shape;

const SECTIONS = Object.keys(configSchema.shape) as Section[];

/** What step 2 puts in place of bad listeners; never read (every check reading listeners needs them valid). */
const STAND_IN_LISTENERS = [{ name: 'stand-in', address: '127.0.0.1:0' }];

/** A config read section by section. */
export interface Sections {
  /** The valid sections as written; a bad one holds a stand-in or its default, never to be read. */
  readonly config: Config;
  readonly bad: ReadonlySet<Section>;
  /** Step 2: errors of the cross-section rules the whole parse did not reach. */
  readonly errors: readonly string[];
}

function isSection(key: PropertyKey | undefined): key is Section {
  return typeof key === 'string' && (SECTIONS as string[]).includes(key);
}

/** A parsed YAML mapping, or undefined. */
export function mapping(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Steps 1 and 2 for `raw`, whose whole parse gave `issues`. */
export function validSections(raw: unknown, issues: readonly z.core.$ZodIssue[]): Sections {
  const top = mapping(raw);
  const bad = new Set<Section>();
  for (const issue of issues) {
    const key = issue.path[0];
    if (top === undefined || (key === undefined && issue.code !== 'unrecognized_keys'))
      for (const s of SECTIONS) bad.add(s);
    else if (isSection(key)) bad.add(key);
  }
  const errors: string[] = [];
  for (;;) {
    const candidate: Record<string, unknown> = {};
    for (const s of SECTIONS) if (top !== undefined && s in top && !bad.has(s)) candidate[s] = top[s];
    if (bad.has('listeners')) candidate.listeners = STAND_IN_LISTENERS;
    const r = configSchema.safeParse(candidate, { reportInput: true });
    if (r.success) return { config: r.data, bad, errors };
    const fresh = r.error.issues.filter((i) => isSection(i.path[0]) && !bad.has(i.path[0]));
    if (fresh.length === 0) break;
    errors.push(...formatIssues(fresh, '', configSchema));
    for (const i of fresh) bad.add(i.path[0] as Section);
  }
  // Only a schema change could get here (the stand-in alone not parsing): nothing further runs.
  for (const s of SECTIONS) bad.add(s);
  return { config: configSchema.parse({ listeners: STAND_IN_LISTENERS }), bad, errors };
}

/** Step 3: why the check `what`, which reads `needs`, cannot run, or undefined when it can. */
export function unmet(what: string, needs: readonly Section[], bad: ReadonlySet<Section>): string | undefined {
  const missing = needs.filter((s) => bad.has(s));
  if (missing.length === 0) return undefined;
  return `${what}: ${missing.join(', ')} ${missing.length === 1 ? 'has' : 'have'} errors`;
}
