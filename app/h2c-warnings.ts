/**
 * `switchboard check`'s warning for `listeners[].h2c: allow` (issue 40 item 7): on the net panel
 * (and worker threads running it) `allow` splices an h2c connection routed by its first stream,
 * so under `routing: per-request` its later streams reach that backend unchecked. That matters
 * only when the address book tells paths apart, which is judged from its routing table:
 *
 * 1. The book must expose one (`routingTable()`: bfe, file, sqlite, etcd); a custom book without
 *    it is not judged (no warning).
 * 2. The table tells paths apart when any basic rule has `paths` other than `/*` alone, any
 *    `file` entry a `path` other than `/`, or any condition calls a path or URL primitive
 *    (`req_path_…`, `req_url_…`; named conditions included, they sit in the same table).
 * A warning is a line for stderr; the config stays valid.
 */
import { type Config, h2cModeOf } from '../src/config/schema.ts';
import type { AddressBook, RoutingTableSource } from '../src/contracts/types.ts';

const PATH_PRIMITIVE = /\breq_(path|url)_/;

/** Whether `value` (a routing table, as plain data) routes on the path anywhere. */
export function tellsPathsApart(value: unknown): boolean {
  if (typeof value === 'string') return PATH_PRIMITIVE.test(value);
  if (Array.isArray(value)) return value.some(tellsPathsApart);
  if (value === null || typeof value !== 'object') return false;
  for (const [key, v] of Object.entries(value)) {
    if (key === 'paths' && Array.isArray(v) && v.some((p) => p !== '/*' && p !== '*')) return true;
    if (key === 'path' && typeof v === 'string' && v !== '' && v !== '/') return true;
    if (tellsPathsApart(v)) return true;
  }
  return false;
}

function hasRoutingTable(book: AddressBook): book is AddressBook & RoutingTableSource {
  return typeof (book as Partial<RoutingTableSource>).routingTable === 'function';
}

/** Whether the panel's connections go through the net engine (the only one that splices h2c). */
function splicesH2c(config: Config): boolean {
  const panel = config.panel as { name: string; engine?: unknown };
  return panel.name === 'net' || (panel.name === 'worker' && panel.engine !== 'http2');
}

/** One line per listener whose `h2c: allow` lets later streams past a book that tells paths apart. */
export function h2cAllowWarnings(config: Config, book: AddressBook): string[] {
  if (config.routing !== 'per-request' || !splicesH2c(config)) return [];
  const allow = config.listeners.filter((l) => h2cModeOf(l, config) === 'allow');
  if (allow.length === 0 || !hasRoutingTable(book) || !tellsPathsApart(book.routingTable())) return [];
  return allow.map(
    (l) =>
      `listeners.${l.name}.h2c: allow splices an h2c connection routed by its first stream only, and the ` +
      'address book tells paths apart: later streams reach that backend unchecked (h2c: route routes every stream)',
  );
}
