/**
 * What the dashboard's backend rows and listener table read (`GET /ui/data`, issue 45 item 2),
 * through real traffic on every panel: per backend the requests it served, their status classes
 * and bytes (app/metrics/backend-traffic.ts, counted from the access records every panel ends, the
 * worker panel's threads summed on the main thread), the last health probe with its time, the
 * time in state; per listener its address, TLS mode, file certificates and connection count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter } from '../harness/router.ts';

const TOKEN = 'served-s3cret';

interface Served {
  requests: number;
  classes: Record<string, number>;
  bytesIn: number;
  bytesOut: number;
}
interface BackendRow {
  id: string;
  served: Served;
  clusters: { cluster: string; state: string; since: string; lastCheck: { ok: boolean; at: string } | null }[];
}
interface Data {
  backends: BackendRow[];
  listenerDetails: {
    name: string;
    bound: string | null;
    tls: string;
    total: number;
    certificates: { names: string[]; source: string; notAfter: string }[];
  }[];
}

async function uiData(port: number): Promise<Data> {
  const r = await httpGet(port, '/ui/data', {
    host: `127.0.0.1:${port}`,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(r.status).toBe(200);
  return JSON.parse(r.body) as Data;
}

/** name, panel, routing, whether statuses are seen, the least bytes in per request (the http2 panel counts body bytes: a GET has none). */
const PANELS: [string, Record<string, unknown>, string, boolean, number][] = [
  ['net, per-request', { name: 'net' }, 'per-request', true, 16],
  ['net, per-connection', { name: 'net' }, 'per-connection', false, 16],
  ['http2', { name: 'http2' }, 'per-request', true, 0],
  ['worker (net, 2 threads), per-request', { name: 'worker', threads: 2, engine: 'net' }, 'per-request', true, 16],
];

describe('dashboard data: what each backend served, its last check, the listeners', () => {
  let backend: TestBackend;
  let pki: Pki;

  beforeAll(async () => {
    // `/status/404` answers 404, anything else 200 with a small body.
    backend = await startHttpBackend('s', (req, res) => {
      const status = req.url === '/status/404' ? 404 : req.url === '/status/503' ? 503 : 200;
      res.writeHead(status, { 'content-type': 'text/plain', 'content-length': 5 }).end('hello');
    });
    pki = await createPki();
  });
  afterAll(async () => {
    await backend?.close();
    await pki?.close();
  });

  it.each(PANELS)(
    '%s',
    async (_name, panel, routing, statuses, minIn) => {
      const cert = await pki.leaf('www', { dns: ['www.example.test'] });
      const router = await startTestRouter({
        panel,
        routing,
        admin: { address: '127.0.0.1:0', token: TOKEN },
        listeners: [
          { name: 'web', address: '127.0.0.1:0' },
          { name: 'tls', address: '127.0.0.1:0', tls: 'terminate', certificates: [{ cert: cert.cert, key: cert.key }] },
        ],
        addressBook: {
          name: 'bfe',
          products: { web: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
          clusters: {
            c: {
              healthCheck: { type: 'tcp', interval: '100ms', timeout: '500ms', failNum: 1, succNum: 1, active: true },
              subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } },
            },
          },
        },
      });
      try {
        const port = router.port('web');
        const admin = router.router.admin!.address().port;
        const paths = ['/a', '/b', '/c', '/d', '/status/404', '/status/503'];
        for (const p of paths) await httpGet(port, p);
        let row: BackendRow | undefined;
        await eventually(
          async () => {
            row = (await uiData(admin)).backends.find((b) => b.id === backend.address);
            return row?.served.requests === paths.length && row.clusters[0]?.lastCheck !== null;
          },
          20_000,
          'six requests counted for the backend and a probe settled',
        );
        const served = row!.served;
        if (statuses) {
          expect(served.classes).toEqual({ none: 0, '1xx': 0, '2xx': 4, '3xx': 0, '4xx': 1, '5xx': 1 });
        } else {
          // Routed once per connection, the router never reads the backend's status line.
          expect(served.classes.none).toBe(paths.length);
        }
        // Each answer is at least its 5-byte body; each request at least its request line (net).
        expect(served.bytesOut).toBeGreaterThanOrEqual(5 * paths.length);
        expect(served.bytesIn).toBeGreaterThanOrEqual(minIn * paths.length);
        const c = row!.clusters[0]!;
        expect(c.lastCheck!.ok).toBe(true);
        expect(Date.now() - Date.parse(c.lastCheck!.at)).toBeLessThan(60_000);
        expect(c.state).toBe('up');
        expect(Date.parse(c.since)).toBeLessThanOrEqual(Date.now());

        const data = await uiData(admin);
        const web = data.listenerDetails.find((l) => l.name === 'web')!;
        const tls = data.listenerDetails.find((l) => l.name === 'tls')!;
        expect(web).toMatchObject({ tls: 'off', bound: `127.0.0.1:${port}`, certificates: [] });
        // The http2 panel publishes no connection ends (its streams are its records): no count to show.
        if (panel.name !== 'http2') {
          await eventually(
            async () => (await uiData(admin)).listenerDetails[0]!.total >= paths.length,
            20_000,
            'connections counted',
          );
        }
        expect(tls.tls).toBe('terminate');
        expect(tls.certificates).toEqual([
          { names: ['www.example.test'], source: 'file', notAfter: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
        ]);
      } finally {
        await router.close();
      }
    },
    60_000,
  );
});
