/**
 * The host table (reference bfe.md §4.1): host → product (and host tag), as a trie of labels
 * read right to left. An exact host wins; otherwise the deepest `*.suffix` wildcard that covers
 * at least one more label (any depth: `*.example.test` matches `a.b.example.test`, not
 * `example.test`); otherwise a bare `*`.
 *
 *   root ─ test ─ example ─ www        (exact: www.example.test)
 *                     └── splat         (*.example.test)
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

interface Node {
  readonly children: Map<string, Node>;
  exact: HostEntry | undefined;
  splat: HostEntry | undefined;
}

function newNode(): Node {
  return { children: new Map(), exact: undefined, splat: undefined };
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

/** A label trie from host patterns to entries; built once per snapshot, read-only after. */
export class HostTable {
  readonly #root = newNode();
  #size = 0;

  /** Number of patterns in the table. */
  get size(): number {
    return this.#size;
  }

  /** Adds a normalised pattern; returns the entry it collides with, if any (nothing is replaced). */
  add(pattern: string, entry: HostEntry): HostEntry | undefined {
    const wildcard = pattern === '*' || pattern.startsWith('*.');
    const name = pattern === '*' ? '' : wildcard ? pattern.slice(2) : pattern;
    let node = this.#root;
    let end = name.length;
    while (end > 0) {
      const dot = name.lastIndexOf('.', end - 1);
      const label = name.slice(dot + 1, end);
      let next = node.children.get(label);
      if (next === undefined) {
        next = newNode();
        node.children.set(label, next);
      }
      node = next;
      end = dot < 0 ? 0 : dot;
    }
    const existing = wildcard ? node.splat : node.exact;
    if (existing !== undefined) return existing;
    if (wildcard) node.splat = entry;
    else node.exact = entry;
    this.#size++;
    return undefined;
  }

  /** The entry for a request host (lower-case, no port, no trailing dot), or undefined. */
  lookup(host: string): HostEntry | undefined {
    let node = this.#root;
    if (host === '') return node.splat;
    let best: HostEntry | undefined;
    let end = host.length;
    while (end > 0) {
      // A splat at this node covers the labels still left of `end`: at least one remains here.
      if (node.splat !== undefined) best = node.splat;
      const dot = host.lastIndexOf('.', end - 1);
      const next = node.children.get(host.slice(dot + 1, end));
      if (next === undefined) return best;
      node = next;
      end = dot < 0 ? 0 : dot;
    }
    return node.exact ?? best;
  }
}
