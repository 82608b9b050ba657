/**
 * A reload's read by the change log (`changes.ts`): with the previous read as its base, only the
 * products and clusters written since are read again (with `meta`, and `conditions` when
 * written); the rest is the base's objects. Anything the log cannot vouch for reads every table
 * (`read.ts` `readBfeSteps`), so the input is the one a whole read gives either way.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { Steps } from '../lib/sliced.ts';
import { type Changed, changedSince, type LogPosition, logPosition } from './changes.ts';
import { eachArray, type Json, type RowsRead, readBfeSteps, readClusters, readHead, readProducts } from './read.ts';
import { Labels } from './relabel.ts';

/** A read the next `readBfeChangedSteps` can start from: its input and where it stood in the change log. */
export interface ReadBase {
  readonly input: unknown;
  readonly position: LogPosition;
}

/** What `readBfeChangedSteps` read. */
export interface ChangedRead extends RowsRead {
  /** Where the read stands in the change log; undefined when the file has no (complete) log. */
  readonly position: LogPosition | undefined;
  /** True when only the products and clusters named in the log were read. */
  readonly partial: boolean;
}

/**
 * A reload's read (`changes.ts`): with `base`, the previous read without problems, only the
 * products and clusters the change log names since it are read (and `meta`, and `conditions`
 * when written), the rest is `base`'s objects; every table otherwise (`readBfeSteps` without
 * labels, `previous` as there). The input is equal either way (keys in order); a partial read
 * that meets a row problem reads every table instead, so problems come as a whole read gives
 * them.
 */
export function* readBfeChangedSteps(
  db: DatabaseSync,
  base: ReadBase | undefined,
  previous?: unknown,
): Steps<ChangedRead> {
  const position = logPosition(db);
  if (position !== undefined && base !== undefined) {
    const changed = changedSince(db, base.position, position);
    if (changed !== undefined) {
      const read = yield* readChanged(db, base.input, changed);
      if (read !== undefined) return { ...read, position, partial: true };
    }
  }
  return { ...(yield* readBfeSteps(db, false, previous)), position, partial: false };
}

/** `base` with the `changed` products and clusters read again; undefined when only a whole read can tell. */
function* readChanged(db: DatabaseSync, base: unknown, changed: Changed): Steps<RowsRead | undefined> {
  if (!isObject(base)) return undefined;
  const problems: string[] = [];
  const input: Json = {};
  yield* readHead(db, input, undefined, changed.conditions ? undefined : base);
  const products = yield* readNamed(db, base.products, changed.products, 'products', (names) =>
    readProducts(db, undefined, problems, base, names),
  );
  if (products === undefined || problems.length > 0) return undefined;
  input.products = products;
  const clusters = yield* readNamed(db, base.clusters, changed.clusters, 'clusters', (names) =>
    readClusters(db, undefined, problems, base, names),
  );
  if (clusters === undefined || problems.length > 0) return undefined;
  input.clusters = clusters;
  return { input, labels: new Labels(), labelled: false, problems };
}

/**
 * `old` (a read's `products` or `clusters`) with the members `names` read again by `read`: the
 * same object when each came out identical, the same keys in the same order when none came or
 * went, and otherwise every name of `table` in the table's order (as a whole read orders them).
 */
function* readNamed(
  db: DatabaseSync,
  old: unknown,
  names: readonly string[],
  table: 'products' | 'clusters',
  read: (names: string) => Steps<Json>,
): Steps<Json | undefined> {
  if (!isObject(old) || names.includes('__proto__')) return undefined;
  if (names.length === 0) return old;
  const fresh = yield* read(JSON.stringify(names));
  let sameKeys = true;
  let same = true;
  for (const name of names) {
    const had = Object.hasOwn(old, name);
    if (had !== Object.hasOwn(fresh, name)) sameKeys = false;
    else if (had && fresh[name] !== old[name]) same = false;
  }
  if (sameKeys && same) return old;
  const out: Json = {};
  if (sameKeys) {
    for (const name of Object.keys(old)) out[name] = Object.hasOwn(fresh, name) ? fresh[name] : old[name];
    return out;
  }
  const changed = new Set(names);
  const found = (name: string): boolean => {
    if (changed.has(name)) {
      if (!Object.hasOwn(fresh, name)) return false;
      out[name] = fresh[name];
    } else {
      // Not written since `old` was read, so it was there (the log is complete).
      if (!Object.hasOwn(old, name)) return false;
      out[name] = old[name];
    }
    return true;
  };
  let complete = true;
  yield* eachArray(db, `SELECT name FROM ${table} ORDER BY name`, (r) => {
    if (complete) complete = found(String(r[0]));
  });
  return complete ? out : undefined;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
