/**
 * One client connection through the `net` panel (per-connection routing):
 *
 *   accept → peek (head under peekTimeout / maxHeaderBytes) → Request → findAddresses
 *          → openUpstream (findJack + connect, retries) → write peeked bytes → splice
 *
 * Every exit writes one access-log line with a result code. Nothing is written to a backend
 * before the route is decided; errors are answered per DESIGN's table.
 */
import type { Socket } from 'node:net';
import type { ResultCode } from '../../src/errors.ts';
import type { AccessRecord } from '../../src/log.ts';
import { PeekFailure, type Peeked, peekSocket } from '../../src/peek/peek.ts';
import { createRequest } from '../../src/request.ts';
import { errorResponse, statusOf } from '../../src/respond.ts';
import type { Runtime } from '../../src/runtime.ts';
import { splice } from '../../src/splice.ts';
import type { Request } from '../../src/types.ts';
import { openUpstream } from '../../src/upstream.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';

const LINGER_MS = 2_000;
const noop = () => {};

/** Answers an HTTP/1 client with the router's error response, then closes. */
export function answer(socket: Socket, code: ResultCode, httpClient: boolean): void {
  const bytes = httpClient ? errorResponse(code) : undefined;
  if (bytes === undefined || socket.destroyed) {
    socket.destroy();
    return;
  }
  // Keep draining what the client still sends so the close does not turn into a reset that
  // could discard the response; give up after a short linger.
  socket.end(bytes);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

function requestFor(peeked: Peeked, socket: Socket, listener: ListenerConfig): Request {
  const { head } = peeked;
  return createRequest({
    protocol: 'http1',
    host: head.host,
    port: head.port,
    path: head.path,
    target: head.target,
    query: head.query,
    method: head.method,
    headers: head.headers,
    sni: undefined,
    alpn: [],
    clientIp: socket.remoteAddress ?? '',
    clientPort: socket.remotePort ?? 0,
    peerIp: socket.remoteAddress ?? '',
    localIp: socket.localAddress ?? '',
    localPort: socket.localPort ?? 0,
    vip: undefined,
    secure: false,
    trustedClient: false,
    tls: undefined,
    listener: listener.name,
  });
}

/** Handles one accepted socket to completion; `done` runs once when it has fully closed. */
export async function handleConnection(
  socket: Socket,
  listener: ListenerConfig,
  runtime: Runtime,
  done: () => void,
): Promise<void> {
  const engine = runtime.engine;
  const started = performance.now();
  const record: AccessRecord = {
    listener: listener.name,
    client: `${socket.remoteAddress}:${socket.remotePort}`,
    bytesIn: 0,
    bytesOut: 0,
    durationMs: 0,
    result: 'ok',
  };
  const log = (result: string, status?: number, reason?: string) => {
    record.result = result;
    if (status !== undefined && status > 0) record.status = status;
    if (reason !== undefined) record.reason = reason;
    record.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    record.bytesIn = socket.bytesRead;
    record.bytesOut = socket.bytesWritten;
    runtime.accessLog(record);
    done();
  };
  /** Logs once the client socket has closed (after an answer was flushed). */
  const finish = (result: string, status?: number, reason?: string) => {
    if (socket.destroyed) log(result, status, reason);
    else socket.once('close', () => log(result, status, reason));
  };
  socket.on('error', noop);

  let peeked: Peeked;
  try {
    peeked = await peekSocket(socket, engine.limits);
  } catch (e) {
    if (!(e instanceof PeekFailure)) throw e;
    if (e.result === 'client_closed') {
      socket.destroy();
      log('client_closed', undefined, e.message);
      return;
    }
    finish(e.result, statusOf(e.result), e.message);
    answer(socket, e.result, e.protocol === 'http1');
    return;
  }

  const request = requestFor(peeked, socket, listener);
  record.protocol = request.protocol;
  record.host = request.host;
  if (request.path !== undefined) record.path = request.path;
  if (request.method !== undefined) record.method = request.method;

  const candidates = engine.book.findAddresses(request);
  if (candidates === undefined) {
    finish('no_route', 404);
    answer(socket, 'no_route', true);
    return;
  }
  record.product = candidates.product;
  record.cluster = candidates.cluster;

  const up = await openUpstream(request, candidates, engine.operator, runtime.registry, engine.limits.connectTimeout);
  record.attempts = up.attempts;
  if ('result' in up) {
    finish(up.result, statusOf(up.result), up.reason);
    answer(socket, up.result, true);
    return;
  }
  const { socket: upstream, jack } = up;
  record.backend = jack.backend.id;
  if (socket.destroyed) {
    upstream.destroy();
    runtime.registry.closed(jack.backend.id);
    log('client_closed', undefined, 'client went away while connecting');
    return;
  }
  upstream.once('close', () => runtime.registry.closed(jack.backend.id));
  splice(socket, upstream, peeked.buffer, engine.limits.idleTimeout, (end) => log(end));
}
