/**
 * The host table and VIP table of a build (compile.ts step 3): every product's hosts, host tags
 * and VIPs, in table order; a host or VIP under two products is a problem naming both places.
 *
 * When no product changed (the same validated products, in the same order, the same default
 * product, no rule reading host tags: `compile.ts`, `sameHostTable`), the new snapshot shares
 * the previous one's host and VIP tables: they are read-only once built, and a fill would make
 * the same entries (the previous build found no problem in them).
 *
 * With a previous snapshot whose build used the same path prefix (`reuse.ts`), the host table is
 * patched instead of filled: a copy of the previous one, without the hosts of the products that
 * changed or went, plus the hosts of the products that changed or came. The unchanged products'
 * hosts had no problem in the previous build, so when the patch finds none either the table is
 * the one a fill makes; when it finds one, the table is filled from scratch, so the problems and
 * their order are exactly a fill's. VIPs (few) are always filled, reusing unchanged entries.
 */
import { canonicalIp } from '../../src/base/ip.ts';
import { runToEnd, type Steps } from '../lib/sliced.ts';
import { type HostEntry, HostTable, normaliseConfigHost } from './host-table.ts';
import { Issues } from './issues.ts';
import type { ProductConfig, RoutingTable } from './routing-table.ts';
import type { Snapshot } from './snapshot.ts';

/** What filling the host table needs of a build. */
export interface HostCtx {
  readonly issues: Issues;
  readonly prefix: string;
  /** The host table being built (replaced by the patched copy when the patch succeeds). */
  hosts: HostTable;
  readonly table: RoutingTable;
  /**
   * The previous snapshot, the products whose validated object is its own, and whether its host
   * and VIP tables are provably this build's (`compile.ts`, `sameHostTable`).
   */
  readonly reuse:
    | {
        readonly previous: Snapshot;
        readonly products: Pick<ReadonlySet<string>, 'has'>;
        readonly sameHosts: boolean;
      }
    | undefined;
}

/** `path` under the build's config path prefix. */
export function at(ctx: { readonly prefix: string }, path: string): string {
  return ctx.prefix === '' ? path : `${ctx.prefix}.${path}`;
}

/** A frozen host table entry. */
export function entry(product: string, via: HostEntry['via'], tag: string | undefined, pattern: string, where: string) {
  return Object.freeze({ product, via, tag, pattern, where }) satisfies HostEntry;
}

/**
 * Fills `ctx.hosts` from every product and returns the VIP table: the previous snapshot's two
 * tables when no product changed, else the previous host table patched when it can be, else
 * both filled.
 */
export function* fillHosts(ctx: HostCtx): Steps<ReadonlyMap<string, HostEntry>> {
  if (ctx.reuse?.sameHosts === true) {
    ctx.hosts = ctx.reuse.previous.hosts;
    return ctx.reuse.previous.vips;
  }
  const vips = new Map<string, HostEntry>();
  const patched = ctx.reuse === undefined ? undefined : yield* patchedHosts(ctx, ctx.reuse);
  if (patched !== undefined) {
    ctx.hosts = patched;
    for (const [name, product] of Object.entries(ctx.table.products)) addVips(ctx, name, product, vips);
    yield;
    return vips;
  }
  ctx.hosts = new HostTable();
  for (const [name, product] of Object.entries(ctx.table.products)) {
    yield* addHostNames(ctx, name, product);
    addVips(ctx, name, product, vips);
    yield;
  }
  return vips;
}

/** The previous host table patched for the products that changed, or undefined on any problem. */
function* patchedHosts(ctx: HostCtx, reuse: NonNullable<HostCtx['reuse']>): Steps<HostTable | undefined> {
  const prev = reuse.previous;
  const hosts = yield* prev.hosts.copy();
  for (const [name, product] of Object.entries(prev.table.products)) {
    if (reuse.products.has(name)) continue;
    for (const raw of namesOf(product)) {
      const n = normaliseConfigHost(raw);
      if (!('error' in n)) hosts.remove(n.host, name);
    }
  }
  const scratch: HostCtx = { ...ctx, issues: new Issues(), hosts };
  for (const [name, product] of Object.entries(ctx.table.products)) {
    if (!reuse.products.has(name)) runToEnd(addHostNames(scratch, name, product));
  }
  return scratch.issues.list.length === 0 ? hosts : undefined;
}

function* namesOf(product: ProductConfig): Iterable<string> {
  yield* product.hosts ?? [];
  for (const tagged of Object.values(product.hostTags ?? {})) yield* tagged;
}

function addHost(
  ctx: HostCtx,
  product: string,
  tag: string | undefined,
  raw: string,
  where: () => string,
  prev: HostTable | undefined,
): void {
  const n = normaliseConfigHost(raw);
  if ('error' in n) {
    ctx.issues.add(where(), n.error);
    return;
  }
  // A reused product's hosts were all in the previous table, each under its own entry.
  const old = prev?.get(n.host);
  const e = old?.product === product && old.tag === tag ? old : entry(product, 'host', tag, n.host, where());
  const clash = ctx.hosts.add(n.host, e);
  if (clash !== undefined) ctx.issues.add(where(), `host ${n.host} is already listed at ${clash.where}`);
}

/** Hosts per step: a product may list thousands. */
const HOST_BATCH = 256;

function* addHostNames(ctx: HostCtx, name: string, product: ProductConfig): Steps<void> {
  const base = at(ctx, `products.${name}`);
  const prev = ctx.reuse?.products.has(name) ? ctx.reuse.previous.hosts : undefined;
  const hosts = product.hosts ?? [];
  for (let i = 0; i < hosts.length; i++) {
    addHost(ctx, name, undefined, hosts[i]!, () => `${base}.hosts[${i}]`, prev);
    if (i % HOST_BATCH === HOST_BATCH - 1) yield;
  }
  for (const [tag, tagged] of Object.entries(product.hostTags ?? {})) {
    for (let i = 0; i < tagged.length; i++) {
      addHost(ctx, name, tag, tagged[i]!, () => `${base}.hostTags.${tag}[${i}]`, prev);
      if (i % HOST_BATCH === HOST_BATCH - 1) yield;
    }
  }
}

function addVips(ctx: HostCtx, name: string, product: ProductConfig, vips: Map<string, HostEntry>): void {
  const base = at(ctx, `products.${name}`);
  const prev = ctx.reuse?.products.has(name) ? ctx.reuse.previous.vips : undefined;
  for (const [i, raw] of (product.vips ?? []).entries()) {
    const where = `${base}.vips[${i}]`;
    const ip = canonicalIp(raw.trim());
    const clash = ip === undefined ? undefined : vips.get(ip);
    const old = ip === undefined ? undefined : prev?.get(ip);
    if (ip === undefined) ctx.issues.add(where, `expected an IP address, got ${JSON.stringify(raw)}`);
    else if (clash !== undefined) ctx.issues.add(where, `vip ${ip} is already listed at ${clash.where}`);
    else vips.set(ip, old?.product === name ? old : entry(name, 'vip', undefined, ip, where));
  }
}
