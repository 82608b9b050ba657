/**
 * What each backend served, for the dashboard's backend rows (`GET /ui/data`): requests, their
 * HTTP status classes and the bytes of the client side of each exchange.
 *
 * 1. Counted from the access records every panel already ends through
 *    src/data-path/access-record.ts (metrics.ts hands them over from `switchboard:request:end` and
 *    `switchboard:connection:end`), so there is one implementation for every panel; the worker
 *    panel's threads forward their records to the main thread, which counts them all here (the
 *    process's sum).
 * 2. A request end that reached a backend counts one request, its status class (`2xx`… from
 *    `status`; none when the router did not see one) and its bytes. A connection end counts the
 *    same for a connection routed once (per-connection routing: one "request" is one forwarded
 *    connection) unless requests of that connection were counted already (per-request routing
 *    names its first backend on the connection's record too): the clients of open connections
 *    whose requests counted are kept in a bounded set, like policy-actions.ts.
 * 3. Cost per request end: a Map lookup, four additions and one Set insert of the record's client
 *    string (built once per connection by the panel). Nothing is counted without an admin listener
 *    (nobody subscribes). Backends no longer configured are dropped when read (`prune`).
 */
import type { AccessRecord } from '../../src/base/log.ts';

/** The most open connections remembered as counted by their requests. */
const MAX_OPEN = 100_000;

/** What one backend served since the router started. */
export interface BackendTrafficCounts {
  /** Requests (per-request routing, HTTP/2 streams) or forwarded connections (per-connection). */
  requests: number;
  /** By status class: index 1 = 1xx … 5 = 5xx (0: no status seen). */
  readonly classes: [number, number, number, number, number, number];
  /** Bytes from clients (in) and to clients (out) on the exchanges this backend served. */
  bytesIn: number;
  bytesOut: number;
}

/** Per-backend request, status-class and byte counts. */
export class BackendTraffic {
  readonly #cells = new Map<string, BackendTrafficCounts>();
  /** Clients (`ip:port`) of open connections whose requests were counted. */
  readonly #countedOn = new Set<string>();

  /** A request (or HTTP/2 stream) ended. */
  noteRequest(record: AccessRecord): void {
    if (record.backend === undefined) return;
    this.#count(record.backend, record);
    // Bounded: a connection end that never came must not grow it (it only risks a double count).
    if (this.#countedOn.size >= MAX_OPEN) this.#countedOn.clear();
    this.#countedOn.add(record.client);
  }

  /** A connection ended: counted when routed once to a backend, not when its requests were. */
  noteConnection(record: AccessRecord): void {
    if (this.#countedOn.delete(record.client) || record.backend === undefined) return;
    this.#count(record.backend, record);
  }

  #count(backend: string, record: AccessRecord): void {
    let cell = this.#cells.get(backend);
    if (cell === undefined) {
      cell = { requests: 0, classes: [0, 0, 0, 0, 0, 0], bytesIn: 0, bytesOut: 0 };
      this.#cells.set(backend, cell);
    }
    cell.requests++;
    const status = record.status;
    const c = status === undefined ? 0 : Math.trunc(status / 100);
    const classes = cell.classes;
    classes[c >= 1 && c <= 5 ? c : 0]! += 1;
    cell.bytesIn += record.bytesIn;
    cell.bytesOut += record.bytesOut;
  }

  /** The counts of backend `id` (zeros when it served nothing). */
  of(id: string): BackendTrafficCounts {
    return this.#cells.get(id) ?? { requests: 0, classes: [0, 0, 0, 0, 0, 0], bytesIn: 0, bytesOut: 0 };
  }

  /** Forgets the backends `live` no longer names (read time, so the hot path never prunes). */
  prune(live: (id: string) => boolean): void {
    for (const id of this.#cells.keys()) if (!live(id)) this.#cells.delete(id);
  }
}
