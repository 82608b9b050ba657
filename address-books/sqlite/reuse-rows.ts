/**
 * The previous read's objects for unchanged rows (bench/README.md, reloads under load, fourth
 * pass). A reload reads every row again; without this, every row of the `products` part of the
 * input (10,000 host strings, a product object and its lists per product) is a new object that
 * lives across the read's slices, so the scavenger copies all of it on every reload. With it,
 * a row equal to the previous read's row at the same place is dropped at once (its values die
 * young) and the previous object is kept; a product whose rows are all unchanged is the
 * previous product object itself (which `../bfe/reuse.ts` then recognises by identity).
 *
 *   previous list  [a, b, c]   rows a, b, x  →  [a, b] copied once, then x pushed (fresh)
 *   previous list  [a, b]      rows a, b     →  the previous list itself
 *
 * Exactness: a list is the previous one only when every pushed value equals the previous value
 * at its index (`deepEqual`: plain data, keys in order) and the count is the same; an object
 * is the previous one only when its keys come out in the same order with identical values.
 * Otherwise the result is built as a fresh read would build it, so the input is always equal
 * to what a read without `previous` gives.
 */
import { deepEqual } from '../bfe/reuse.ts';

type Json = Record<string, unknown>;

/** A list built row by row against the previous read's list at the same place. */
export class ListBuild {
  readonly #old: readonly unknown[] | undefined;
  #same = 0;
  #fresh: unknown[] | undefined;

  constructor(old: unknown) {
    this.#old = Array.isArray(old) ? old : undefined;
  }

  /**
   * Appends `value` (or keeps the previous equal value); returns its index. `keys`: `value` is
   * a flat object of exactly these keys, in this order, compared without `deepEqual`'s key lists.
   */
  push(value: unknown, keys?: readonly string[]): number {
    const old = this.#old;
    if (this.#fresh === undefined) {
      const i = this.#same;
      if (
        old !== undefined &&
        i < old.length &&
        (keys === undefined ? deepEqual(old[i], value) : sameFlat(old[i], value as Json, keys))
      ) {
        return this.#same++;
      }
      this.#fresh = old === undefined ? [] : old.slice(0, this.#same);
    }
    return this.#fresh.push(value) - 1;
  }

  result(): unknown[] {
    if (this.#fresh !== undefined) return this.#fresh;
    const old = this.#old;
    if (old === undefined) return [];
    return this.#same === old.length ? (old as unknown[]) : old.slice(0, this.#same);
  }
}

/** `tag → host list` of one product, built against the previous `hostTags`. */
class TagsBuild {
  readonly #old: Json | undefined;
  readonly tags = new Map<string, ListBuild>();

  constructor(old: unknown) {
    this.#old = isObject(old) ? old : undefined;
  }

  push(tag: string, host: unknown): number {
    let list = this.tags.get(tag);
    if (list === undefined) {
      list = new ListBuild(this.#old !== undefined && Object.hasOwn(this.#old, tag) ? this.#old[tag] : undefined);
      this.tags.set(tag, list);
    }
    return list.push(host);
  }

  result(): Json {
    const out: Json = {};
    for (const [tag, list] of this.tags) out[tag] = list.result();
    return sameObject(this.#old, out) ? (this.#old as Json) : out;
  }
}

/** One product: `hosts` / `hostTags` (in the order their first row came), `vips`, `basicRules`, `rules`. */
export class ProductBuild {
  readonly #old: Json | undefined;
  #hosts: ListBuild | undefined;
  #tags: TagsBuild | undefined;
  #tagsFirst = false;
  #vips: ListBuild | undefined;
  #basic: ListBuild | undefined;
  #rules: ListBuild | undefined;

  constructor(old: unknown) {
    this.#old = isObject(old) ? old : undefined;
  }

  host(host: unknown): number {
    this.#hosts ??= new ListBuild(this.#old?.hosts);
    return this.#hosts.push(host);
  }

  taggedHost(tag: string, host: unknown): number {
    if (this.#tags === undefined) {
      this.#tagsFirst = this.#hosts === undefined;
      this.#tags = new TagsBuild(this.#old?.hostTags);
    }
    return this.#tags.push(tag, host);
  }

  vip(vip: unknown): number {
    this.#vips ??= new ListBuild(this.#old?.vips);
    return this.#vips.push(vip);
  }

  basicRule(rule: unknown): number {
    this.#basic ??= new ListBuild(this.#old?.basicRules);
    return this.#basic.push(rule);
  }

  /** An advanced rule: `{ cond, cluster }`. */
  rule(rule: Json): number {
    this.#rules ??= new ListBuild(this.#old?.rules);
    return this.#rules.push(rule, RULE_KEYS);
  }

  result(): Json {
    const out: Json = {};
    if (this.#tagsFirst && this.#tags !== undefined) out.hostTags = this.#tags.result();
    if (this.#hosts !== undefined) out.hosts = this.#hosts.result();
    if (!this.#tagsFirst && this.#tags !== undefined) out.hostTags = this.#tags.result();
    if (this.#vips !== undefined) out.vips = this.#vips.result();
    if (this.#basic !== undefined) out.basicRules = this.#basic.result();
    if (this.#rules !== undefined) out.rules = this.#rules.result();
    return sameObject(this.#old, out) ? (this.#old as Json) : out;
  }
}

/** True when `old` is a plain object with exactly `keys`, in order, and `value`'s values (`Object.is`). */
function sameFlat(old: unknown, value: Json, keys: readonly string[]): boolean {
  if (!isObject(old) || Object.getPrototypeOf(old) !== Object.prototype) return false;
  let i = 0;
  for (const k in old) {
    if (k !== keys[i] || !Object.is(old[k], value[k])) return false;
    i++;
  }
  return i === keys.length;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when `old` has exactly `out`'s keys, in order, with identical values. */
export function sameObject(old: Json | undefined, out: Json): boolean {
  if (old === undefined) return false;
  const ko = Object.keys(old);
  const kn = Object.keys(out);
  if (ko.length !== kn.length) return false;
  for (let i = 0; i < ko.length; i++) if (ko[i] !== kn[i] || old[ko[i]!] !== out[kn[i]!]) return false;
  return true;
}

/** The previous read's `products` (or nothing), as builders by name. */
export function productBuilds(previous: unknown): (name: string) => ProductBuild {
  const old = isObject(previous) && isObject(previous.products) ? previous.products : undefined;
  return (name) => new ProductBuild(old !== undefined && Object.hasOwn(old, name) ? old[name] : undefined);
}

const RULE_KEYS = ['cond', 'cluster'] as const;
/** The keys of a backend row's object, without and with a name. */
export const BACKEND_KEYS = ['address', 'weight'] as const;
export const NAMED_BACKEND_KEYS = ['address', 'weight', 'name'] as const;

/** One sub-cluster: `weight` and its backend list, against the previous sub-cluster. */
class SubBuild {
  readonly name: string;
  readonly old: Json | undefined;
  readonly weight: unknown;
  readonly backends: ListBuild;

  constructor(name: string, old: Json | undefined, weight: unknown) {
    this.name = name;
    this.old = old;
    this.weight = weight;
    this.backends = new ListBuild(old?.backends);
  }

  result(): Json {
    const out: Json = { weight: this.weight, backends: this.backends.result() };
    return sameObject(this.old, out) ? (this.old as Json) : out;
  }
}

/**
 * One cluster: its policy columns (the row's object, `subclusters` first; the previous cluster
 * stands for it when every other key is equal) and its sub-clusters in row order.
 */
export class ClusterBuild {
  readonly #old: Json | undefined;
  /** The row's object, or undefined when the previous cluster has the same policy keys. */
  readonly #head: Json | undefined;
  readonly #subs: SubBuild[] = [];

  constructor(old: unknown, head: Json) {
    this.#old = isObject(old) ? old : undefined;
    this.#head = this.#old !== undefined && sameHead(this.#old, head) ? undefined : head;
  }

  /** Adds a sub-cluster (rows come in name order, so a name comes once). */
  sub(name: string, weight: unknown): SubBuild {
    const olds = this.#old?.subclusters;
    const old = isObject(olds) && Object.hasOwn(olds, name) ? olds[name] : undefined;
    const sub = new SubBuild(name, isObject(old) ? old : undefined, weight);
    this.#subs.push(sub);
    return sub;
  }

  subNamed(name: string): SubBuild | undefined {
    for (const sub of this.#subs) if (sub.name === name) return sub;
    return undefined;
  }

  result(): Json {
    const subs: Json = {};
    for (const sub of this.#subs) subs[sub.name] = sub.result();
    const oldSubs = this.#old?.subclusters;
    const subclusters = isObject(oldSubs) && sameObject(oldSubs, subs) ? oldSubs : subs;
    if (this.#head !== undefined) {
      this.#head.subclusters = subclusters;
      return this.#head;
    }
    const old = this.#old as Json;
    return old.subclusters === subclusters ? old : { ...old, subclusters };
  }
}

/** True when `old` has `head`'s keys in order and equal values, `subclusters` aside. */
function sameHead(old: Json, head: Json): boolean {
  const ko = Object.keys(old);
  const kn = Object.keys(head);
  if (ko.length !== kn.length) return false;
  for (let i = 0; i < ko.length; i++) {
    const k = kn[i]!;
    if (ko[i] !== k) return false;
    if (k !== 'subclusters' && !deepEqual(old[k], head[k])) return false;
  }
  return true;
}

/** The previous read's `clusters` (or nothing), as builders by name. */
export function clusterBuilds(previous: unknown): (name: string, head: Json) => ClusterBuild {
  const old = isObject(previous) && isObject(previous.clusters) ? previous.clusters : undefined;
  return (name, head) => new ClusterBuild(old !== undefined && Object.hasOwn(old, name) ? old[name] : undefined, head);
}
