/**
 * The names an `acme:` section orders certificates for: its `names:` list, else the exact host
 * names of the routing table (wildcards and `*` are skipped: ACME issues them only by DNS-01).
 * Routing tables differ per address book, so the table is walked as plain data and every string
 * under a `host`, `hosts` or `hostnames` key is a candidate (bfe products' host lists, the file
 * book's `host:` entries, database rows).
 */
const HOST_KEYS = new Set(['host', 'hosts', 'hostnames', 'hostNames']);
const EXACT_HOST = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9-]{2,63}$/;
const MAX_DEPTH = 12;

function collect(value: unknown, underHostKey: boolean, depth: number, out: Set<string>): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') {
    const n = value.toLowerCase().replace(/:\d+$/, '');
    if (underHostKey && EXACT_HOST.test(n)) out.add(n);
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) collect(v, underHostKey, depth + 1, out);
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collect(v, HOST_KEYS.has(k), depth + 1, out);
  }
}

/** The exact host names in a routing table (sorted, unique). */
export function routingTableHosts(table: unknown): string[] {
  const out = new Set<string>();
  collect(table, false, 0, out);
  return [...out].sort();
}
