/**
 * One request/response exchange on a per-request client connection: its access record, its
 * timing, and whether each half has finished. The driver (per-request-driver.ts) creates one per
 * request head and calls `finish` once; the record is written as a per-request access line
 * (when the config asks for them) and published on `channels.requestEnd` for observers.
 */
// Imported rather than the global: `globalThis.performance` is a lazy accessor, so every read of
// it goes through a generic global load (issue 18: two per request).
import { performance } from 'node:perf_hooks';
import type { AccessRecord } from '../../src/base/log.ts';
import type { ConnectionFacts, Hold } from '../../src/contracts/policy.ts';
import type { Request } from '../../src/contracts/types.ts';
import { endRecord, logRequest, type MaybeOffAccessLog } from '../../src/data-path/access-record.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import { finishContext } from '../../src/policy/finish-context.ts';
import type { PolicySet } from '../../src/policy/policy-set.ts';
import { tracing } from '../../src/tracing/tracer.ts';

/** Who is told of an exchange's end (`observedBy`), and what it knows of it. */
interface Observed {
  readonly policies: PolicySet;
  readonly connection: ConnectionFacts;
  readonly request: Request | undefined;
}

/** One request on the connection and the state of its response. */
export class Exchange {
  readonly record: AccessRecord;
  readonly method: string;
  /** An Upgrade or CONNECT request: bytes after it wait until the response decides. */
  readonly mayTunnel: boolean;
  /** The protocols the request offered in Upgrade (with Connection: upgrade); a 101 may switch to these only. */
  readonly upgradeTo: readonly string[];
  /** The client asked to close after this exchange (Connection: close, HTTP/1.0). */
  readonly clientClose: boolean;
  requestDone = false;
  responseDone = false;
  readonly #started = performance.now();
  readonly #log: { readonly accessLog: MaybeOffAccessLog } | undefined;
  #finished = false;
  /** The slots of the `policies:` rules that let the request through (in-flight), given back at `finish`. */
  policyHold: Hold | undefined = undefined;
  /** The rule set told of the end (`finish`), set only when some policy observes ends. */
  #observed: Observed | undefined = undefined;

  /**
   * `client` is the record's client (`ip:port` of the request's client, see per-request-records.ts
   * ExchangeRecords); `head` and `request` are absent for a head that failed to parse (its record says
   * only why); `log` is the runtime whose access log gets the per-request line, a copy of the
   * record marked `line: 'request'` made only when that log writes (undefined: connection
   * lines only).
   */
  constructor(
    listener: string,
    client: string,
    log: { readonly accessLog: MaybeOffAccessLog } | undefined,
    head?: Http1Head,
    request?: Request,
  ) {
    this.#log = log;
    this.method = head?.method ?? '';
    this.mayTunnel = head !== undefined && (head.upgrade || head.method === 'CONNECT');
    this.upgradeTo = head?.upgradeTo ?? [];
    this.clientClose = head?.connectionClose ?? true;
    this.record = new ExchangeRecord(listener, client, request?.host, request?.path, head?.method);
    const tracer = tracing.current;
    // The parsed head's field lines as sent (peek/http1-head.ts), when it keeps them: a cheap look for traceparent.
    if (tracer !== undefined && request !== undefined)
      tracer.begin(this.record, request, (head as { readonly fields?: string } | undefined)?.fields);
  }

  /** True once both the request and its response have been forwarded. */
  get complete(): boolean {
    return this.requestDone && this.responseDone;
  }

  /**
   * Has `finish` tell `policies` of the end (ended `request`, with `request` and the product
   * and cluster the record names by then). The caller calls it only when `policies.observes`.
   */
  observedBy(policies: PolicySet, connection: ConnectionFacts, request: Request | undefined): void {
    this.#observed = { policies, connection, request };
  }

  /**
   * Ends the exchange with `result` (once): gives its policy slots back, writes its access line,
   * publishes `switchboard:request:end`, and tells the policies that observe ends.
   */
  finish(result: string, status?: number, reason?: string): void {
    if (this.#finished) return;
    this.#finished = true;
    this.policyHold?.release();
    const record = this.record;
    endRecord(record, this.#started, result, status, reason);
    // The log is read at the end: a reload may have replaced the access log meanwhile.
    logRequest(record, this.#log?.accessLog, 'request');
    const o = this.#observed;
    if (o !== undefined)
      o.policies.finish(finishContext('request', o.connection, o.request, record.product, record.cluster));
  }
}

/**
 * An exchange's access record: plain data, keys in the order they are set (the access line's
 * order) — listener … result, then host, path and method when known, then what routing and the
 * response add (product, cluster, attempts, backend, status, reason; `trace_id` and `span_id` when
 * traced). Made by a constructor
 * rather than as a literal: V8 then keeps room inside the object for the keys added later
 * (in-object slack tracking), where a literal's object has none and moves them to a property
 * array that is reallocated as it grows (issue 18: per request).
 */
class ExchangeRecord implements AccessRecord {
  declare listener: string;
  declare client: string;
  declare protocol: string;
  declare bytesIn: number;
  declare bytesOut: number;
  declare durationMs: number;
  declare result: string;
  declare host?: string;
  declare path?: string;
  declare method?: string;

  constructor(listener: string, client: string, host?: string, path?: string, method?: string) {
    this.listener = listener;
    this.client = client;
    this.protocol = 'http1';
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.durationMs = 0;
    this.result = 'ok';
    if (host !== undefined) this.host = host;
    if (path !== undefined) this.path = path;
    if (method !== undefined) this.method = method;
  }
}
