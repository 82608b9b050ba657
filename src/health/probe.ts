/**
 * One health probe: a TCP connect, or an HTTP GET whose status must equal the expected one.
 * Every probe has a deadline (`timeout`), is abortable (removal, close) and holds no handle that
 * keeps the process alive (sockets are unref'd). It resolves true/false and never rejects.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { formatHostPort } from '../config/address.ts';
import type { Backend, HealthCheckPolicy } from '../types.ts';

/** Probes `backend` under `policy`; resolves true when healthy. */
export function probe(backend: Backend, policy: HealthCheckPolicy, signal: AbortSignal): Promise<boolean> {
  return policy.type === 'http' ? httpProbe(backend, policy, signal) : tcpProbe(backend, policy.timeout, signal);
}

/** True when a TCP connection to the backend opens within `timeout` ms. */
export function tcpProbe(backend: Backend, timeout: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const socket = connect({ host: backend.host, port: backend.port });
    socket.unref();
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      socket.destroy();
      resolve(ok);
    };
    const abort = (): void => done(false);
    const timer = setTimeout(abort, timeout);
    timer.unref();
    signal.addEventListener('abort', abort, { once: true });
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** True when `GET policy.path` answers `policy.statusCode` within `timeout` ms. Redirects are not followed. */
export function httpProbe(backend: Backend, policy: HealthCheckPolicy, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const req = httpRequest({
      host: backend.host,
      port: backend.port,
      path: policy.path,
      method: 'GET',
      agent: false,
      headers: {
        host: policy.host !== '' ? policy.host : formatHostPort(backend.host, backend.port),
        accept: '*/*',
        'user-agent': 'switchboard-health-check',
        connection: 'close',
      },
    });
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      req.destroy();
      resolve(ok);
    };
    const abort = (): void => done(false);
    const timer = setTimeout(abort, policy.timeout);
    timer.unref();
    signal.addEventListener('abort', abort, { once: true });
    req.once('socket', (s) => s.unref());
    req.once('response', (res) => {
      res.resume();
      done(res.statusCode === policy.statusCode);
    });
    req.once('error', () => done(false));
    req.end();
  });
}
