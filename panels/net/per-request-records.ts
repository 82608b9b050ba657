/**
 * The access records of a per-request connection: each exchange's record (exchange.ts) and the
 * connection's own (`connectionRecord`), which the first request bound to a link fills with its
 * route (backend, product, cluster, attempts).
 *
 * The record's client (`ip:port` of the request's client) is the string of the connection's
 * previous request when the address is the same (it is, unless a forwarded header names another
 * client), so a keep-alive connection builds it once.
 */
import type { AccessRecord } from '../../src/base/log.ts';
import type { Request } from '../../src/contracts/types.ts';
import { describeTls } from '../../src/data-path/access-record.ts';
import { connectionPoint } from '../../src/listener/connection-point.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { Exchange } from './exchange.ts';
import type { PerRequestStart } from './per-request-start.ts';

/** The connection's TLS facts onto the line of an answer that has no request (a head that failed to parse). */
function copyTls(record: AccessRecord, from: AccessRecord): void {
  record.secure = true;
  if (from.sni !== undefined) record.sni = from.sni;
  if (from.alpn !== undefined) record.alpn = from.alpn;
  if (from.tls_version !== undefined) record.tls_version = from.tls_version;
}

/** Makes the exchanges of one connection and fills its record from the first bound one. */
export class ExchangeRecords {
  readonly #start: PerRequestStart;
  /** The access record's client of the last request (`ip:port`) and the address it names. */
  #client: string | undefined;
  #clientIp = '';
  #clientPort = 0;
  /** No request was bound to a link yet: the next one fills the connection's access record. */
  #firstBind = true;

  constructor(start: PerRequestStart) {
    this.#start = start;
  }

  /** The exchange of a routed head (its end told to the policies that observe ends, if any). */
  open(head: Http1Head, request: Request): Exchange {
    const ex = new Exchange(this.#start.listener.name, this.#clientOf(request), this.#requestLog(), head, request);
    if (request.secure) describeTls(ex.record, request);
    const policies = this.#start.engine.policies;
    if (policies.observes) ex.observedBy(policies, request, request);
    return ex;
  }

  /** The exchange of an answer to a request that has none (a head that failed to parse). */
  forAnswer(): Exchange {
    const ex = new Exchange(this.#start.listener.name, this.#start.connectionRecord.client, this.#requestLog());
    const connectionRecord = this.#start.connectionRecord;
    if (connectionRecord.secure === true) copyTls(ex.record, connectionRecord);
    const policies = this.#start.engine.policies;
    if (policies.observes) ex.observedBy(policies, connectionPoint(this.#start.conn).connection, undefined);
    return ex;
  }

  /** The attempts of a new connection for `ex` (before it is bound, or refused). */
  connectAttempts(ex: Exchange, attempts: number): void {
    ex.record.attempts = attempts;
    if (this.#firstBind) this.#start.connectionRecord.attempts = attempts;
  }

  /** `ex` is bound to a link to `backend` (`attempts`: of a new connection). */
  bound(ex: Exchange, backend: string, attempts: number | undefined): void {
    const record = ex.record;
    record.backend = backend;
    if (attempts !== undefined) record.attempts = attempts;
    if (!this.#firstBind) return;
    this.#firstBind = false;
    const connectionRecord = this.#start.connectionRecord;
    connectionRecord.backend = record.backend;
    if (record.product !== undefined) connectionRecord.product = record.product;
    if (record.cluster !== undefined) connectionRecord.cluster = record.cluster;
    if (attempts !== undefined) connectionRecord.attempts = attempts;
  }

  #clientOf(request: Request): string {
    if (this.#client === undefined || request.clientIp !== this.#clientIp || request.clientPort !== this.#clientPort) {
      this.#clientIp = request.clientIp;
      this.#clientPort = request.clientPort;
      this.#client = `${request.clientIp}:${request.clientPort}`;
    }
    return this.#client;
  }

  /** Where an exchange's per-request line goes: the runtime's access log, or nowhere (connection lines). */
  #requestLog(): PerRequestStart['runtime'] | undefined {
    return this.#start.requestLines ? this.#start.runtime : undefined;
  }
}
