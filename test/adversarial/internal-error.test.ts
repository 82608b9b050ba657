/**
 * Defence in depth (issue 17 item 2): a throw anywhere on a connection's or a stream's path —
 * a bug, since bad input is refused with a typed error — must close that connection or stream
 * only: the process and its worker threads stay up, the admission slot and the upstream socket
 * come back, the next client is served. The bug is injected with an operator module whose
 * `findJack` throws for one host (an operator is plugin code: the core cannot trust it never
 * throws). Before the fix, on a per-request keep-alive connection the throw left the client's
 * 'data' handler and ended the process (a worker thread, with the worker panel). A throw on a
 * retry's `findJack` comes from inside the failed connect's callback: before its fix it ended
 * the process on the splicing panels and left the stream unanswered on the http2 panel.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerPanel } from '../../panels/worker/index.ts';
import { closedPort, type ProxiedHttpBackend, startProxiedHttpBackend } from '../harness/backend.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { expectNoLeaks, resources } from './leaks.ts';

const ROUND_ROBIN = fileURLToPath(new URL('../../operators/round-robin.ts', import.meta.url));
const OPERATOR = `
import { roundRobin } from ${JSON.stringify(ROUND_ROBIN)};
export default {
  name: 'throws-for-boom',
  create(options, ctx) {
    const rr = roundRobin.create(options, ctx);
    return {
      findJack(request, candidates, attempt) {
        if (request.host === 'boom.test') throw new Error('injected operator bug');
        // On a retry only: the throw comes from inside the failed connect's callback.
        if (request.host === 'retry.test' && attempt.number > 1) throw new Error('injected retry bug');
        return rr.findJack(request, candidates, attempt);
      },
    };
  },
};
`;

const PANELS: [string, Record<string, unknown>][] = [
  ['net, per-request', { routing: 'per-request' }],
  ['net, per-connection', { routing: 'per-connection' }],
  ['http2', { panel: 'http2' }],
  ['worker (net engine)', { panel: { name: 'worker', threads: 2, engine: 'net' } }],
  ['worker (http2 engine)', { panel: { name: 'worker', threads: 2, engine: 'http2' } }],
];

const req = (host: string, close = false) =>
  `GET /x HTTP/1.1\r\nHost: ${host}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

describe.each(PANELS)('a throw on the request path, on %s', (_name, extra) => {
  let backend: ProxiedHttpBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
  });

  /** The router with the throwing operator: product `p` (every host) to the live backend, plus `more`. */
  async function start(more: { products?: object; clusters?: object } = {}) {
    backend = await startProxiedHttpBackend('web');
    const dir = await tempDir({ 'operator.ts': OPERATOR });
    router = await startTestRouter(
      {
        ...extra,
        operator: './operator.ts',
        listeners: [{ name: 'web', address: '127.0.0.1:0', maxConnections: 4 }],
        limits: { idleTimeout: '1s' },
        addressBook: {
          name: 'bfe',
          products: { ...more.products, p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
          clusters: {
            ...more.clusters,
            c: { proxyProtocol: 'v2', subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } },
          },
        },
      },
      { dir },
    );
    const r = router;
    const workers = typeof extra.panel === 'object' ? (r.router.panel as unknown as WorkerPanel) : undefined;
    const startedAt = workers?.workers().map((w) => w.startedAt);
    const baseline = resources();
    /** After the throws: one internal_error line, the next client served, no thread restarted, nothing leaked. */
    const servesOn = async () => {
      await eventually(() => r.access.some((a) => a.result === 'internal_error'), 10_000, 'an internal_error line');
      const ok = await rawRequest(r.port(), req('ok.test', true), { timeoutMs: 10_000 });
      expect(statusOf(ok)).toBe(200);
      if (workers !== undefined) {
        expect(workers.workers().map((w) => w.startedAt)).toEqual(startedAt);
        await eventually(() => Object.values(workers.connectionsByListener()).every((n) => n === 0));
      } else {
        await expectNoLeaks(r, baseline);
      }
    };
    return { port: r.port(), servesOn };
  }

  it('closes that connection or stream only; the router serves on and nothing leaks', async () => {
    const { port, servesOn } = await start();
    // More than the listener's 4 slots: a leaked slot would refuse the last ones. The first
    // request of each connection is served, the second (same keep-alive connection) throws;
    // per-connection routing decides once, on the first head, so that one throws there.
    const once = extra.routing === 'per-connection';
    for (let i = 0; i < 6; i++) {
      const res = await rawRequest(port, once ? req('boom.test') : req('ok.test') + req('boom.test'), {
        timeoutMs: 10_000,
      });
      expect(statusOf(res)).toBe(once ? 0 : 200);
    }
    await servesOn();
  });

  it('a throw on a retry (inside the failed connect) closes that request only', async () => {
    const dead = await closedPort();
    const { port, servesOn } = await start({
      products: { r: { hosts: ['retry.test'], rules: [{ cond: 'default_t()', cluster: 'dead' }] } },
      clusters: {
        dead: { retries: 1, subclusters: { s: { weight: 1, backends: [{ address: `127.0.0.1:${dead}` }] } } },
      },
    });
    // The first failed connect may mark the dead backend down: later requests are then 503
    // no_backend without a retry. Each is answered or closed, none hangs.
    for (let i = 0; i < 6; i++) {
      const res = await rawRequest(port, req('retry.test', true), { timeoutMs: 10_000 });
      expect([0, 500, 503]).toContain(statusOf(res));
    }
    await servesOn();
  });
});
