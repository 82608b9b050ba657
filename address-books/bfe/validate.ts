/**
 * Validation of a routing table for `compile.ts`: `routingTableSchema.parse`, one product or
 * cluster per step, with the same output and the same messages, taking what it can from the
 * previous snapshot's build (`reuse.ts`):
 *
 * 1. The top-level keys are validated with `products` and `clusters` taken as they are when they
 *    are plain records that zod's record would copy key for key (`plainRecord`, O(1)); else, or
 *    on any problem, zod's own parse of them (and of the whole table for the message).
 * 2. Each member is the previous validated object when its input is the previous one (the same
 *    object, or equal data); only the others go through zod, whose parse returns copies.
 * 3. A section whose members are all the previous input objects, under the same names in the
 *    same order (`allSame`, identity tests only), is the previous validated record with the
 *    previous memo: nothing is built for it.
 */
import { z } from 'zod';
import type { Steps } from '../lib/sliced.ts';
import { type Issues, joinPath } from './issues.ts';
import { type BuildMemo, type MemoEntry, memoEntry, reusedInput } from './reuse.ts';
import { clusterSchema, productSchema, type RoutingTable, routingTableSchema } from './routing-table.ts';
import type { Snapshot } from './snapshot.ts';

/** A set of names, or every name. */
export type Names = Pick<ReadonlySet<string>, 'has'>;

/** Every name: all members of a section are the previous build's, in the same order. */
const ALL: Names = { has: () => true };

/** The top-level keys, with each product and cluster left for its own step. */
const shallowSchema = routingTableSchema.extend({
  products: z.record(z.string().min(1), z.unknown()).default({}),
  clusters: z.record(z.string().min(1), z.unknown()).default({}),
});

/** The top-level keys other than the sections, when these are plain records (`sectionsAsIs`). */
const topSchema = routingTableSchema.extend({ products: z.unknown(), clusters: z.unknown() });

/**
 * `routingTableSchema.parse`, one product or cluster per step. The output is the same table; a
 * problem in the top-level keys falls back to the whole-table parse so the message is the same.
 */
export function* validate(
  input: unknown,
  prefix: string,
  issues: Issues,
  prev: Snapshot | undefined,
): Steps<Validated> {
  const top = shallow(input);
  if (!top.success) {
    const whole = routingTableSchema.safeParse(input, { reportInput: true });
    if (whole.success) issues.addZod(top.error, prefix, shallowSchema);
    else issues.addZod(whole.error, prefix, routingTableSchema);
    return undefined as unknown as Validated; // the caller throws on the issues
  }
  const { products: rawProducts, clusters: rawClusters } = top.data;
  const pm = prev?.memo;
  const products = yield* validateMembers(
    rawProducts,
    'products',
    productSchema,
    pm?.products,
    prefix,
    issues,
    prev?.table.products,
  );
  const clusters = yield* validateMembers(
    rawClusters,
    'clusters',
    clusterSchema,
    pm?.clusters,
    prefix,
    issues,
    prev?.table.clusters,
  );
  return {
    table: { ...top.data, products: products.validated, clusters: clusters.validated },
    memo: { products: products.memo, clusters: clusters.memo },
    reused: { products: products.same, clusters: clusters.same },
  };
}

type Shallow = { success: true; data: z.output<typeof shallowSchema> } | { success: false; error: z.ZodError };

/**
 * `shallowSchema.safeParse`, without copying `products` and `clusters` when they are plain
 * records whose keys that schema keeps as they are (non-empty strings, no `__proto__`): a
 * 10,000-host table's sections are not copied on every reload. Anything else, or a failure, is
 * the schema's own parse, so the messages are the same.
 */
function shallow(input: unknown): Shallow {
  const sections = sectionsAsIs(input);
  if (sections !== undefined) {
    const top = topSchema.safeParse(input, { reportInput: true });
    if (top.success) {
      const { products: _p, clusters: _c, ...rest } = top.data;
      return { success: true, data: { ...rest, ...sections } };
    }
  }
  return shallowSchema.safeParse(input, { reportInput: true });
}

function sectionsAsIs(input: unknown) {
  if (typeof input !== 'object' || input === null) return undefined;
  const { products = {}, clusters = {} } = input as Record<string, unknown>;
  return plainRecord(products) && plainRecord(clusters) ? { products, clusters } : undefined;
}

/**
 * A plain object that `z.record(z.string().min(1), …)` copies key for key: no empty key, no
 * `__proto__` key (the record drops it), no symbol key (an error). Non-enumerable keys are
 * skipped by both the record and `Object.entries`. O(1): a 1,000-member section is not walked.
 */
function plainRecord(o: unknown): o is Record<string, unknown> {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return false;
  const proto = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return false;
  return !Object.hasOwn(o, '') && !Object.hasOwn(o, '__proto__') && Object.getOwnPropertySymbols(o).length === 0;
}

/** One kind of member (products or clusters), each validated or reused, one step each. */
interface Members<T> {
  readonly validated: Record<string, T>;
  readonly memo: ReadonlyMap<string, MemoEntry<T>>;
  /** The members that are the previous build's objects. */
  readonly same: Names;
}

function* validateMembers<T>(
  raws: Record<string, unknown>,
  kind: 'products' | 'clusters',
  schema: z.ZodType<T>,
  prev: ReadonlyMap<string, MemoEntry<T>> | undefined,
  prefix: string,
  issues: Issues,
  prevValidated: Record<string, T> | undefined,
): Steps<Members<T>> {
  if (prev !== undefined && prevValidated !== undefined && allSame(raws, prev)) {
    yield;
    return { validated: prevValidated, memo: prev, same: ALL };
  }
  const out = { validated: {} as Record<string, T>, memo: new Map<string, MemoEntry<T>>(), same: new Set<string>() };
  for (const [name, raw] of Object.entries(raws)) {
    const same = reusedInput(prev, name, raw);
    if (same !== undefined) {
      out.validated[name] = same.validated;
      out.memo.set(name, same);
      out.same.add(name);
    } else {
      const r = schema.safeParse(raw, { reportInput: true });
      if (r.success) {
        out.validated[name] = r.data;
        out.memo.set(name, memoEntry(raw, r.data));
      } else issues.addZod(r.error, joinPath(prefix, [kind, name]), schema);
    }
    yield;
  }
  return out;
}

/**
 * True when every member is the very input object the previous build validated (an identity
 * test, `reuse.ts`), under the same name, in the same order: the previous build's validated
 * record and memo are then this build's. Stops at the first difference.
 */
function allSame<T>(raws: Record<string, unknown>, prev: ReadonlyMap<string, MemoEntry<T>>): boolean {
  let n = 0;
  const it = prev.entries();
  for (const name in raws) {
    const p = it.next();
    if (p.done || p.value[0] !== name) return false;
    const raw = raws[name];
    const entry = p.value[1];
    if (raw !== entry.source && (entry.input === undefined || entry.input.deref() !== raw)) return false;
    n++;
  }
  return n === prev.size;
}

/** The validated table, its memo entries, and which parts are the previous build's. */
export interface Validated {
  readonly table: RoutingTable;
  readonly memo: Pick<BuildMemo, 'products' | 'clusters'>;
  /** Products and clusters whose validated object is the previous one. */
  readonly reused: { readonly products: Names; readonly clusters: Names };
}
