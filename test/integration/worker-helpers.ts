/**
 * Helpers for the worker-panel tests: a bfe config over given backends, the panel's worker
 * view, and a long-lived client connection through the router (per-connection routing).
 */
import { connect, type Socket } from 'node:net';
import type { WorkerPanel } from '../../panels/worker/index.ts';
import type { TestRouter } from '../harness/router.ts';

/** A bfe book with one product (every host) and one cluster `c` over `addresses`. */
export function bfeConfig(
  threads: number,
  addresses: readonly string[],
  extra: { operator?: unknown; cluster?: Record<string, unknown>; [k: string]: unknown } = {},
): Record<string, unknown> {
  const { operator = 'round-robin', cluster = {}, ...rest } = extra;
  return {
    panel: { name: 'worker', threads },
    operator,
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: {
        c: {
          ...cluster,
          subclusters: { s: { weight: 1, backends: addresses.map((address) => ({ address })) } },
        },
      },
    },
    ...rest,
  };
}

/** The worker panel of a test router. */
export function workersOf(r: TestRouter): WorkerPanel {
  return r.router.panel as unknown as WorkerPanel;
}

/** Opens a connection, sends one HTTP/1 head (routed once, then spliced), resolves when connected. */
export function openTunnel(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write('GET / HTTP/1.1\r\nHost: www.example.test\r\n\r\n');
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Sends `text` on `s` and resolves true when it comes back (echo backend), false on close. */
export function echoes(s: Socket, text: string, timeoutMs = 5_000): Promise<boolean> {
  return new Promise((resolve) => {
    if (s.destroyed) return resolve(false);
    let got = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.removeListener('data', onData);
      s.removeListener('close', onClose);
      resolve(ok);
    };
    const onData = (c: Buffer) => {
      got += c.toString('latin1');
      if (got.includes(text)) done(true);
    };
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    s.on('data', onData);
    s.once('close', onClose);
    s.write(text);
  });
}
