/**
 * Structural sharing between snapshots: a rebuild that moves one host or one backend of a
 * 10,000-host table builds almost nothing new (bench/reload-latency.ts). Every snapshot keeps a
 * `BuildMemo`: for each product and cluster, the input it was validated from (`source`) and the
 * validated object. The next compile, handed the live snapshot as `previous`:
 *
 *   product / cluster input ──the same object?──────► yes: the previous validated object (no parse)
 *                            (identity: the reader      (every member the same, in the same order:
 *                            kept its previous value)    the previous validated record and memo)
 *                           ──else deepEqual(source)?─► yes: the same; no: validated, compiled again
 *   cluster: validated object reused  ──────────────► the previous CompiledCluster
 *   product: validated object reused, every cluster
 *            it names reused, same named conditions,
 *            no host-tag condition, same prefix/clock ► the previous ProductRoutes (rule trees,
 *                                                      compiled conditions, Candidates)
 *   host table: no product changed (same record, same default product, no host-tag rule):
 *               the previous host and VIP tables; else the previous one copied and patched
 *               (`host-fill.ts`), or filled again, with the previous HostEntry objects
 *
 * A memo entry keeps one copy of a member: the input when it differs from the validated object
 * (zod applied a default), else the validated object plus a `WeakRef` to the input, so a reader
 * that hands back its previous objects (`../lib/json-steps.ts`, the sqlite book's rows) is
 * matched by identity while nothing but that reader keeps the input alive.
 *
 * Exactness: equal input (same keys in the same order, same values) validates to the same output
 * and compiles to the same routes, so a reused part is what a full build would have made; parts
 * that are reused added no problem to the previous build, so a build's problems are the same
 * with or without `previous`. A condition that reads host tags (`req_host_tag_in`) is compiled
 * against its own snapshot's host table, so products using one are always compiled again.
 */
import type { ClusterConfig, ProductConfig } from './routing-table.ts';

/** One product or cluster of a build: what it was validated from, and the result. */
export interface MemoEntry<T> {
  /** The input (or, when equal to it, the validated object itself: one copy kept, not two). */
  readonly source: unknown;
  readonly validated: T;
  /**
   * The input object itself, held weakly, when `source` is the validated copy: a reader that
   * keeps its previous values (`../lib/json-steps.ts`, the sqlite book's rows) hands the very
   * same object back for an unchanged member, which is then matched without `deepEqual`.
   */
  readonly input?: WeakRef<object>;
}

/** What a snapshot remembers of its build for the next one. */
export interface BuildMemo {
  readonly prefix: string;
  readonly now: (() => number) | undefined;
  readonly conditions: Readonly<Record<string, string>> | undefined;
  /** A rule of the build may read host tags (its host table is then never shared). */
  readonly readsHostTags: boolean;
  readonly products: ReadonlyMap<string, MemoEntry<ProductConfig>>;
  readonly clusters: ReadonlyMap<string, MemoEntry<ClusterConfig>>;
}

/** A memo entry that keeps one copy when the input already is the validated form. */
export function memoEntry<T>(raw: unknown, validated: T): MemoEntry<T> {
  if (raw === validated || !deepEqual(raw, validated)) return { source: raw, validated };
  return typeof raw === 'object' && raw !== null
    ? { source: validated, validated, input: new WeakRef(raw) }
    : { source: validated, validated };
}

/**
 * The previous memo entry when `raw` equals what it was validated from: the same object (an
 * identity test) or equal plain data (`deepEqual`).
 */
export function reusedInput<T>(memo: ReadonlyMap<string, MemoEntry<T>> | undefined, name: string, raw: unknown) {
  const prev = memo?.get(name);
  if (prev === undefined) return undefined;
  if (raw === prev.source || (prev.input !== undefined && prev.input.deref() === raw)) return prev;
  return deepEqual(raw, prev.source) ? prev : undefined;
}

const HOST_TAG = /host_tag/i;

/** True when a condition text (or a named condition it may call) can read host tags. */
export function mayReadHostTags(cond: string, named: Readonly<Record<string, string>> | undefined): boolean {
  if (HOST_TAG.test(cond)) return true;
  if (named === undefined) return false;
  for (const text of Object.values(named)) if (HOST_TAG.test(text)) return true;
  return false;
}

function isPlain(o: object): boolean {
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

/**
 * Plain-data equality: primitives by `Object.is`, arrays element by element, plain objects by
 * their keys in order and their values. Anything else is equal only to itself.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i]) return false;
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
