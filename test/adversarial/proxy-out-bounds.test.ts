/**
 * Issue 17 item 2: a client value the outbound PROXY header cannot carry. With `maxHeaderBytes`
 * at the schema's 1 MiB a Host of 70 KB is a valid head, but the v2 AUTHORITY TLV has a 16-bit
 * length (and receivers such as HAProxy refuse more than 255 bytes). Before the fix the encoder
 * threw: per-request routing closed the client with no answer (older builds exited the process),
 * per-connection routing left the client unanswered, the http2 panel threw out of its 'request'
 * handler (the process died) and the worker panel lost the thread.
 *
 * On every panel: the client gets 431 `header_too_large` before any backend is dialled, the
 * process and its threads stay up, the next request is served (with its AUTHORITY), and no
 * admission slot, socket or timer is left behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerPanel } from '../../panels/worker/index.ts';
import { type ProxiedHttpBackend, startProxiedHttpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { expectNoLeaks, resources } from './leaks.ts';

const BIG_HOST = `${'a'.repeat(70_000)}.test`;
const get = (host: string) => `GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

/** The panels and routing modes that open upstream connections with a PROXY header. */
const PANELS: [string, Record<string, unknown>][] = [
  ['net, per-request', { routing: 'per-request' }],
  ['net, per-connection', { routing: 'per-connection' }],
  ['http2', { panel: 'http2' }],
  ['worker (net engine)', { panel: { name: 'worker', threads: 2, engine: 'net' } }],
  ['worker (http2 engine)', { panel: { name: 'worker', threads: 2, engine: 'http2' } }],
];

function config(extra: Record<string, unknown>, backend: string): Record<string, unknown> {
  return {
    ...extra,
    listeners: [{ name: 'web', address: '127.0.0.1:0', maxConnections: 4 }],
    // idleTimeout: the http2 panel's idle upstream connections (private to one client) close soon.
    limits: { maxHeaderBytes: 1_048_576, idleTimeout: '1s' },
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: {
        c: { proxyProtocol: 'v2', subclusters: { s: { weight: 1, backends: [{ address: backend }] } } },
      },
    },
  };
}

const isWorker = (extra: Record<string, unknown>) => typeof extra.panel === 'object';

describe.each(PANELS)('a Host the PROXY v2 AUTHORITY TLV cannot carry, on %s', (_name, extra) => {
  let backend: ProxiedHttpBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
  });

  it('is answered 431 before any dial; the router serves on and nothing leaks', async () => {
    backend = await startProxiedHttpBackend('pp');
    router = await startTestRouter(config(extra, backend.address));
    const r = router;
    const port = r.port();
    const workers = isWorker(extra) ? (r.router.panel as unknown as WorkerPanel) : undefined;
    const startedAt = workers?.workers().map((w) => w.startedAt);
    const baseline = resources();
    expect(statusOf(await rawRequest(port, get('www.example.test'), { timeoutMs: 10_000 }))).toBe(200);
    const dialled = backend.headers.length;

    // More refusals than the listener has slots (4): a leaked slot would refuse the last ones.
    for (let i = 0; i < 6; i++) {
      const res = await rawRequest(port, get(BIG_HOST), { timeoutMs: 10_000 });
      expect(statusOf(res)).toBe(431);
      expect(headerOf(res, 'x-switchboard-error')).toBe('header_too_large');
    }
    expect(backend.headers).toHaveLength(dialled);
    await r.waitForAccess(7);
    const refused = r.access.filter((a) => a.result === 'header_too_large');
    expect(refused.length).toBeGreaterThanOrEqual(6);
    expect(refused[0]?.reason).toMatch(/authority of 70005 bytes exceeds 255/);

    // The next request is served, with its AUTHORITY, by the same process and threads.
    const ok = await rawRequest(port, get('www.example.test'), { timeoutMs: 10_000 });
    expect(statusOf(ok)).toBe(200);
    expect(backend.headers.at(-1)).toMatchObject({ version: 2, authority: 'www.example.test' });

    if (workers !== undefined) {
      expect(workers.workers().map((w) => w.startedAt)).toEqual(startedAt);
      await eventually(() => Object.values(workers.connectionsByListener()).every((n) => n === 0));
    } else {
      // No admission slot, client socket, upstream socket or timer left.
      await expectNoLeaks(r, baseline);
    }
  });
});
