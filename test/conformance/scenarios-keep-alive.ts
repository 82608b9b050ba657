/**
 * Panel conformance scenario for what a keep-alive HTTP/1.1 connection's later requests reach,
 * part of the table of panel.ts: under per-request routing (every panel's default; the http2
 * panel routes every HTTP/1.1 request too) each request is routed on its own; under `routing:
 * per-connection` the connection is routed once, by its first request, and every later request
 * reaches that backend (README "Access log" and "Panels and options": routing). The case of
 * test/integration/net-routing.test.ts, asked of every panel.
 */
import { expect } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { pathSplitBook } from '../harness/books.ts';
import { KeepAliveClient } from '../harness/keep-alive-client.ts';
import { startTestRouter } from '../harness/router.ts';
import { panelKeys, routesPerConnection, type Scenario } from './panel-under-test.ts';

export const keepAliveScenarios: readonly Scenario[] = [
  {
    name: 'keep-alive: a later request on the connection is routed on its own (per-request), or reaches the first request’s backend (per-connection)',
    spec: 'README Panels and options: routing: per-request | per-connection',
    async run(p) {
      const app = await startHttpBackend('app');
      const api = await startHttpBackend('api');
      const r = await startTestRouter({ ...panelKeys(p), addressBook: pathSplitBook(app.address, api.address) });
      const client = new KeepAliveClient(r.port());
      try {
        client.send('/');
        expect(await client.answer()).toBe('app');
        client.send('/api/x');
        expect(await client.answer()).toBe(routesPerConnection(p) ? 'app' : 'api');
        expect([app.hits, api.hits]).toEqual(routesPerConnection(p) ? [2, 0] : [1, 1]);
      } finally {
        client.close();
        await r.close();
        await Promise.all([app.close(), api.close()]);
      }
    },
  },
];
