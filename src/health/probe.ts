/**
 * One health probe: a TCP connect, or an HTTP GET whose status must equal the expected one.
 * Every probe has a deadline (`timeout`), is abortable (removal, close) and holds no handle that
 * keeps the process alive (sockets are unref'd). It resolves true/false and never rejects.
 *
 * When the backend's cluster sends PROXY headers (`proxyProtocol: v1 | v2`), a backend that
 * requires one would refuse a bare probe, so every probe connection starts with one too: v2
 * LOCAL (no client behind it), or v1 naming the probe's own socket addresses (spec §2.1 advises
 * against `UNKNOWN`, which some receivers reject).
 */
import { type ClientRequest, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { formatHostPort } from '../config/address.ts';
import type { Backend, HealthCheckPolicy } from '../contracts/types.ts';
import { encodeProxyV1, encodeProxyV2Local } from '../proxy-protocol/index.ts';

/** The outbound PROXY mode of a backend's cluster, as probes speak it. */
export type ProbeProxyMode = 'off' | 'v1' | 'v2';

/** A health-check policy plus the cluster's outbound PROXY mode (absent = off). */
export interface ProbePolicy extends HealthCheckPolicy {
  readonly proxyProtocol?: ProbeProxyMode | undefined;
}

/** Probes `backend` under `policy`; resolves true when healthy. */
export function probe(backend: Backend, policy: ProbePolicy, signal: AbortSignal): Promise<boolean> {
  return policy.type === 'http'
    ? httpProbe(backend, policy, signal)
    : tcpProbe(backend, policy.timeout, signal, policy.proxyProtocol);
}

/** The PROXY header a probe connection starts with, or undefined when the cluster sends none. */
export function probePreamble(mode: ProbeProxyMode | undefined, socket: Socket): Buffer | undefined {
  if (mode === 'v2') return encodeProxyV2Local();
  if (mode !== 'v1') return undefined;
  return encodeProxyV1({
    source: { ip: socket.localAddress ?? '', port: socket.localPort ?? 0 },
    destination: { ip: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 },
  });
}

/** True when a TCP connection to the backend opens (and takes the PROXY header) within `timeout` ms. */
export function tcpProbe(
  backend: Backend,
  timeout: number,
  signal: AbortSignal,
  proxyProtocol?: ProbeProxyMode,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const socket = connect({ host: backend.host, port: backend.port });
    socket.unref();
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      socket.destroy();
      resolve(ok);
    };
    const abort = (): void => done(false);
    const timer = setTimeout(abort, timeout);
    timer.unref();
    signal.addEventListener('abort', abort, { once: true });
    socket.once('connect', () => {
      const header = probePreamble(proxyProtocol, socket);
      if (header === undefined) done(true);
      else socket.write(header, (err) => done(err == null));
    });
    socket.once('error', () => done(false));
  });
}

/** True when `GET policy.path` answers `policy.statusCode` within `timeout` ms. Redirects are not followed. */
export function httpProbe(backend: Backend, policy: ProbePolicy, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    let req: ClientRequest | undefined;
    let socket: Socket | undefined;
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      req?.destroy();
      socket?.destroy();
      resolve(ok);
    };
    const abort = (): void => done(false);
    const timer = setTimeout(abort, policy.timeout);
    timer.unref();
    signal.addEventListener('abort', abort, { once: true });
    const send = (connected: Socket | undefined): void => {
      req = httpRequest({
        host: backend.host,
        port: backend.port,
        path: policy.path,
        method: 'GET',
        // With a PROXY header the connection is opened (and the header written) first. Node uses
        // `createConnection` only without an agent, so `agent: false` goes with the other case.
        ...(connected !== undefined ? { createConnection: () => connected } : { agent: false }),
        headers: {
          host: policy.host !== '' ? policy.host : formatHostPort(backend.host, backend.port),
          accept: '*/*',
          'user-agent': 'switchboard-health-check',
          connection: 'close',
        },
      });
      req.once('socket', (s) => s.unref());
      req.once('response', (res) => {
        res.resume();
        done(res.statusCode === policy.statusCode);
      });
      req.once('error', () => done(false));
      req.end();
    };
    const mode = policy.proxyProtocol ?? 'off';
    if (mode === 'off') {
      send(undefined);
      return;
    }
    const s = connect({ host: backend.host, port: backend.port });
    socket = s;
    s.unref();
    s.once('error', () => done(false));
    s.once('connect', () => {
      if (settled) return;
      const header = probePreamble(mode, s);
      if (header !== undefined) s.write(header);
      send(s);
    });
  });
}
