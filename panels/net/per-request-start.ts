/**
 * What the net panel hands the per-request driver (per-request.ts) once the first head of an
 * HTTP/1 connection is peeked: the connection's facts, its access record, and how later heads
 * become Requests.
 */
import type { Socket } from 'node:net';
import type { AccessRecord } from '../../src/base/log.ts';
import { type ListenerConfig, writesRequestLines } from '../../src/config/schema.ts';
import type { Request } from '../../src/contracts/types.ts';
import type { Connection } from '../../src/listener/connection.ts';
import type { Engine, PanelRuntime } from '../../src/panel/contract.ts';
import type { Http1Head } from '../../src/peek/http1.ts';
import type { ProxyHeader } from '../../src/proxy-protocol/index.ts';
import { clientAddressing } from '../../src/request/client-ip.ts';
import { http1Requests } from '../../src/request/from-peek.ts';

/** What the net panel hands over once the first head of an HTTP/1 connection is peeked. */
export interface PerRequestStart {
  readonly client: Socket;
  readonly listener: ListenerConfig;
  readonly runtime: PanelRuntime;
  readonly engine: Engine;
  /** The listener pipeline's connection: its accept time, and `done()` once it has closed. */
  readonly conn: Connection;
  /** The connection's access record (filled with the first request's route). */
  readonly connectionRecord: AccessRecord;
  /**
   * Builds the Request of a later head (same connection facts); throws peer errors. Made on
   * the first later head (a connection with one request never builds it, issue 18 newconn),
   * then replaced by the builder itself.
   */
  requestFor: (head: Http1Head) => Request;
  /**
   * True when the config writes a per-request access line for each exchange (a copy of its
   * record with `line: 'request'`; nothing when the access log is off) and none for the
   * connection; false: one connection line.
   */
  readonly requestLines: boolean;
}

/**
 * The start of a per-request connection handed over by connection.ts: built here, outside the
 * panel's connection handler, so that the driver keeps none of that handler's closures (issue
 * 18: what an idle connection keeps).
 */
export function perRequestStart(
  conn: Connection,
  runtime: PanelRuntime,
  connectionRecord: AccessRecord,
  proxy: ProxyHeader | undefined,
): PerRequestStart {
  const { socket, listener, engine } = conn;
  const start: PerRequestStart = {
    client: socket,
    listener,
    runtime,
    engine,
    conn,
    connectionRecord,
    requestFor: (head) => {
      start.requestFor = http1Requests(proxy, {
        listener: listener.name,
        socket,
        peer: conn,
        addressing: clientAddressing(listener),
      });
      return start.requestFor(head);
    },
    requestLines: writesRequestLines(engine.loaded.config),
  };
  return start;
}
