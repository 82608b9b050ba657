/**
 * The host table (reference bfe.md §4.1): host → product (and host tag), BFE's label trie in
 * flattened form. An exact host wins; otherwise the deepest `*.suffix` wildcard that covers
 * at least one more label (any depth: `*.example.test` matches `a.b.example.test`, not
 * `example.test`); otherwise a bare `*`.
 *
 *   a.b.example.test ─► exact["a.b.example.test"] ─► wildcard["b.example.test"]
 *                    ─► wildcard["example.test"] ─► wildcard["test"] ─► bare "*"
 */

/** What a host resolves to: its product, its host tag and the configured pattern that matched. */
export interface HostEntry {
  readonly product: string;
  /** How the product was found: host table, PROXY destination (VIP) or `defaultProduct`. */
  readonly via: 'host' | 'vip' | 'default';
  readonly tag: string | undefined;
  /** The host as configured (`*.example.test`). */
  readonly pattern: string;
  /** Config path of the host entry (`products.web.hosts[1]`). */
  readonly where: string;
}

/**
 * Normalises a configured host: lower-case, one trailing dot removed. Returns an error text when
 * the host is empty, carries a port, or uses `*` anywhere but as `*` or a leading `*.`.
 */
export function normaliseConfigHost(raw: string): { host: string } | { error: string } {
  let host = raw.trim().toLowerCase();
  if (host.endsWith('.') && host !== '.') host = host.slice(0, -1);
  if (host === '') return { error: 'host must not be empty' };
  if (/:\d+$/.test(host) && !host.startsWith('[')) return { error: `port must not be given in host ${raw}` };
  if (/^\[[^\]]*\]:\d+$/.test(host)) return { error: `port must not be given in host ${raw}` };
  const stars = host.split('*').length - 1;
  if (stars > 1 || (stars === 1 && host !== '*' && !(host.startsWith('*.') && host.length > 2))) {
    return { error: `wildcard must be a bare * or a leading *., got ${raw}` };
  }
  if (host.includes('..') || host.startsWith('.')) return { error: `empty label in host ${raw}` };
  return { host };
}

/**
 * Host patterns → entries, read-only once built. The label trie is kept flat: exact hosts in
 * one map, `*.suffix` wildcards in a map keyed by the suffix, so a lookup is one hash probe of
 * the request's own host string, then one probe per label boundary, left to right (the longest
 * suffix, i.e. the deepest wildcard, first), then the bare `*`.
 */
export class HostTable {
  readonly #exact = new Map<string, HostEntry>();
  readonly #wildcard = new Map<string, HostEntry>();
  #any: HostEntry | undefined;

  /** Number of patterns in the table. */
  get size(): number {
    return this.#exact.size + this.#wildcard.size + (this.#any === undefined ? 0 : 1);
  }

  /** Adds a normalised pattern; returns the entry it collides with, if any (nothing is replaced). */
  add(pattern: string, entry: HostEntry): HostEntry | undefined {
    if (pattern === '*') {
      if (this.#any !== undefined) return this.#any;
      this.#any = entry;
      return undefined;
    }
    const [map, key] = pattern.startsWith('*.') ? [this.#wildcard, pattern.slice(2)] : [this.#exact, pattern];
    const existing = map.get(key);
    if (existing !== undefined) return existing;
    map.set(key, entry);
    return undefined;
  }

  /**
   * A copy to patch (`host-fill.ts`): the entries are shared, the maps are not. A generator
   * that yields every `batch` patterns, for time-sliced builds (`../lib/sliced.ts`).
   */
  *copy(batch = 2048): Generator<void, HostTable, void> {
    const copy = new HostTable();
    let n = 0;
    for (const [from, to] of [
      [this.#exact, copy.#exact],
      [this.#wildcard, copy.#wildcard],
    ] as const) {
      for (const [k, v] of from) {
        to.set(k, v);
        if (++n % batch === 0) yield;
      }
    }
    copy.#any = this.#any;
    return copy;
  }

  /** Removes the entry under a normalised pattern if it belongs to `product`. */
  remove(pattern: string, product: string): void {
    if (pattern === '*') {
      if (this.#any?.product === product) this.#any = undefined;
      return;
    }
    const [map, key] = pattern.startsWith('*.') ? [this.#wildcard, pattern.slice(2)] : [this.#exact, pattern];
    if (map.get(key)?.product === product) map.delete(key);
  }

  /** The entry added under a normalised pattern (not a lookup: `*.a.test` is only `*.a.test`). */
  get(pattern: string): HostEntry | undefined {
    if (pattern === '*') return this.#any;
    return pattern.startsWith('*.') ? this.#wildcard.get(pattern.slice(2)) : this.#exact.get(pattern);
  }

  /** The entry for a request host (lower-case, no port, no trailing dot), or undefined. */
  lookup(host: string): HostEntry | undefined {
    const exact = this.#exact.get(host);
    if (exact !== undefined) return exact;
    const wildcard = this.#wildcard;
    if (wildcard.size > 0) {
      let dot = host.indexOf('.');
      while (dot >= 0) {
        const hit = wildcard.get(host.slice(dot + 1));
        if (hit !== undefined) return hit;
        dot = host.indexOf('.', dot + 1);
      }
    }
    return this.#any;
  }
}
