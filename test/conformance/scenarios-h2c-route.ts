/**
 * Panel conformance scenarios for h2c under per-request routing (issue 40 item 7), part of the
 * table of panel.ts: streams 1, 3 and 5 of one prior-knowledge connection are each routed by
 * their own `:path` on every panel, with the listener's default `h2c` (`route` under
 * `routing: per-request`): on the net panel (and worker threads running it) the connection is
 * handed to the http2 engine; the http2 panel always routes every stream. `/admin` is
 * blackholed: its stream is answered 503 and reaches no backend. Under `routing: per-connection`
 * the listener's default is `allow` (the connection spliced, routed by its first stream:
 * test/integration/h2c-route.test.ts), so there the scenario's listener sets `h2c: route`.
 */
import { type ClientHttp2Session, connect as h2Connect } from 'node:http2';
import { expect } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { pathSplitBook } from '../harness/books.ts';
import { eventually, LISTEN, startTestRouter } from '../harness/router.ts';
import { type PanelUnderTest, panelKeys, routesPerConnection, type Scenario } from './panel-under-test.ts';

const HOST = 'www.example.test';

function configFor(p: PanelUnderTest, app: TestBackend, api: TestBackend): Record<string, unknown> {
  const book = { ...panelKeys(p), addressBook: pathSplitBook(app.address, api.address) };
  return routesPerConnection(p) ? { ...book, listeners: [{ ...LISTEN[0], h2c: 'route' }] } : book;
}

/** One request on `session`: its status and `x-backend`, or how the stream ended (bounded). */
function ask(session: ClientHttp2Session, path: string): Promise<{ status: number | string; backend?: string }> {
  return new Promise((resolve) => {
    const stream = session.request({ ':path': path, ':authority': HOST }, { endStream: true });
    const timer = setTimeout(() => {
      stream.close();
      resolve({ status: 'timeout' });
    }, 5_000);
    stream.on('response', (h) => {
      clearTimeout(timer);
      resolve({ status: Number(h[':status']), backend: String(h['x-backend'] ?? '') });
      stream.resume();
    });
    stream.on('error', (e) => {
      clearTimeout(timer);
      resolve({ status: e.message });
    });
  });
}

export const h2cRouteScenarios: readonly Scenario[] = [
  {
    name: 'h2c per-request (h2c: route by default): streams 1, 3 and 5 of one connection are each routed by their own path',
    spec: 'README listeners: h2c (route | allow | refuse); issue 40 item 7',
    async run(p) {
      const app = await startHttpBackend('app');
      const api = await startHttpBackend('api');
      const r = await startTestRouter(configFor(p, app, api));
      const session = h2Connect(`http://127.0.0.1:${r.port()}`);
      session.on('error', () => {});
      try {
        expect(await ask(session, '/')).toEqual({ status: 200, backend: 'app' });
        expect((await ask(session, '/admin/secret')).status).toBe(503);
        expect(await ask(session, '/api/x')).toEqual({ status: 200, backend: 'api' });
        expect([app.hits, api.hits]).toEqual([1, 1]);
        await eventually(() => r.access.filter((a) => a.protocol === 'h2c').length >= 3);
        // Worker threads post their lines independently: compared as a set.
        const lines = r.access.filter((a) => a.protocol === 'h2c').map((a) => `${a.path} ${a.result}`);
        expect(lines.sort()).toEqual(['/ ok', '/admin/secret blackhole', '/api/x ok']);
      } finally {
        session.destroy();
        await r.close();
        await app.close();
        await api.close();
      }
    },
  },
];
