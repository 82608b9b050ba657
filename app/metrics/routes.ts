/**
 * The routes serving now (issue 45 item 6), read from the runtime at scrape time
 * (app/runtime/routes-log.ts), for books that describe their routes (every built-in one):
 *
 * - `switchboard_routes_version_info{book,source,version} 1`: the book's own version (a
 *   file's `sha256:…`, `revision 42` for etcd, `change 17` for SQLite), so a fleet's routers can
 *   be compared and a dashboard can mark the moment routes changed;
 * - `switchboard_routes_updates_total{book,source}`: `routes updated` lines since start;
 * - `switchboard_routes{book,source,kind}`: hosts, products, clusters and backends.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Runtime } from '../runtime/runtime.ts';

/** Registers the three on `registers`, read from `runtime.routes` at each scrape. */
export function routesMetrics(registers: Registry[], runtime: Pick<Runtime, 'routes'>): void {
  new Gauge({
    name: 'switchboard_routes_version_info',
    help: "The address book's own version of the routes serving now (always 1)",
    labelNames: ['book', 'source', 'version'],
    registers,
    collect() {
      this.reset();
      const s = runtime.routes;
      if (s !== undefined) this.set({ book: s.origin.book, source: s.origin.source, version: s.origin.version }, 1);
    },
  });
  new Counter({
    name: 'switchboard_routes_updates_total',
    help: 'Routes updates applied since start (a book change or a reload that changed the routes)',
    labelNames: ['book', 'source'],
    registers,
    collect() {
      this.reset();
      const s = runtime.routes;
      if (s !== undefined) this.inc({ book: s.origin.book, source: s.origin.source }, s.updates);
    },
  });
  new Gauge({
    name: 'switchboard_routes',
    help: 'What the routes serving now hold, by kind (hosts, products, clusters, backends)',
    labelNames: ['book', 'source', 'kind'],
    registers,
    collect() {
      this.reset();
      const s = runtime.routes;
      if (s === undefined) return;
      for (const [kind, n] of Object.entries(s.counts))
        this.set({ book: s.origin.book, source: s.origin.source, kind }, n);
    },
  });
}
