/**
 * The dashboard's endpoints without a browser (issue 20): the static shell loads without the
 * token (Host-checked, strict CSP, no framing), everything with data needs it, `GET /ui/data`
 * carries backends with rates, traffic samples and reloads, `POST /explain` answers usage errors
 * as `switchboard route` does, and the traffic ring buffer stays bounded.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SERIES, TrafficHistory } from '../../app/admin/traffic.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type HttpAnswer, httpGet } from '../harness/http.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

/** A POST with a JSON body, the token and the admin port's own Host. */
function postJson(port: number, path: string, body: string, headers: Record<string, string>): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        path,
        method: 'POST',
        agent: false,
        headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const TOKEN = 'api-s3cret';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('dashboard endpoints', () => {
  let a: TestBackend;
  let router: TestRouter;
  let port: number;
  const admin = (path: string, options: { method?: string; host?: string; headers?: Record<string, string> } = {}) =>
    httpGet(port, path, { host: `127.0.0.1:${port}`, ...options });
  const post = (path: string, body: string) => postJson(port, path, body, auth);

  beforeAll(async () => {
    a = await startHttpBackend('a');
    router = await startTestRouter({
      admin: { address: '127.0.0.1:0', token: TOKEN },
      addressBook: {
        name: 'bfe',
        products: { web: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
        clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: a.address }] } } } },
      },
    });
    port = router.router.admin!.address().port;
  });
  afterAll(async () => {
    await router.close();
    await a.close();
  });

  it('serves the page shell without the token, with a strict CSP; /ui redirects to /ui/', async () => {
    const redirect = await admin('/ui');
    expect({ status: redirect.status, location: redirect.headers.location }).toEqual({ status: 308, location: 'ui/' });
    const page = await admin('/ui/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script type="module" src="main.js">');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    for (const file of ['main.js', 'api.js', 'backends.js', 'traffic.js', 'routes.js', 'explain.js', 'style.css']) {
      const res = await admin(`/ui/${file}`);
      expect(res.status, file).toBe(200);
    }
    // Only the shipped files pass without the token; any other name is an ordinary admin path.
    expect((await admin('/ui/nothing.js')).status).toBe(401);
    expect((await admin('/ui/nothing.js', { headers: auth })).status).toBe(404);
    expect((await admin('/ui/../routes')).status).not.toBe(200);
  });

  it('the shell is Host-checked like every admin path (DNS rebinding)', async () => {
    const res = await admin('/ui/', { host: `evil.test:${port}` });
    expect({ status: res.status, code: res.headers['x-switchboard-error'] }).toEqual({
      status: 403,
      code: 'host_not_allowed',
    });
  });

  it('GET /ui/data and POST /explain need the token', async () => {
    expect((await admin('/ui/data')).status).toBe(401);
    expect((await postJson(port, '/explain', '{"host":"www.example.test"}', {})).status).toBe(401);
  });

  it('GET /ui/data: version, backends with state and rate, traffic samples, reloads', async () => {
    for (let i = 0; i < 3; i++) expect((await httpGet(router.port(), '/')).status).toBe(200);
    let data: {
      version: string;
      backends: { id: string; state: string; rate: number; total: number }[];
      traffic: {
        samples: { t: number; listeners: Record<string, { cps: number }> }[];
        totals: { results: Record<string, number> };
      };
      reloads: { counts: Record<string, number>; recent: unknown[] };
    } = JSON.parse((await admin('/ui/data', { headers: auth })).body);
    expect(data.version).toBe(router.router.runtime.engine.version);
    expect(data.backends).toEqual([expect.objectContaining({ id: a.address, state: 'up', total: 3 })]);
    // The sampler runs once a second; wait for a sample that saw the three connections end.
    await eventually(async () => {
      data = JSON.parse((await admin('/ui/data', { headers: auth })).body);
      return (data.traffic.totals.results.ok ?? 0) >= 3;
    });
    expect(Object.keys(data.traffic.samples.at(-1)!.listeners)).toEqual(['web']);
    const last = data.traffic.samples.at(-1)!.t;
    const later = JSON.parse((await admin(`/ui/data?since=${last}`, { headers: auth })).body);
    expect(later.traffic.samples.every((s: { t: number }) => s.t > last)).toBe(true);
    expect(data.reloads).toEqual({ counts: { ok: 0, unchanged: 0, failed: 0 }, recent: [] });
    expect((await router.router.reload()).changed).toBe(false);
    const after = JSON.parse((await admin('/ui/data', { headers: auth })).body);
    expect(after.reloads.counts).toEqual({ ok: 0, unchanged: 1, failed: 0 });
  });

  it('POST /explain: the CLI text and JSON; a bad header or field is a 400 with the CLI message', async () => {
    const ok = await post('/explain', JSON.stringify({ host: 'www.example.test', path: '/x' }));
    expect(ok.status).toBe(200);
    const body = JSON.parse(ok.body);
    expect(body).toMatchObject({ ok: true, routed: true, exitCode: 0 });
    expect(body.text).toContain(`chosen: ${a.address} in subcluster s1`);
    expect(body.explanation.cluster.name).toBe('web');
    const none = JSON.parse((await post('/explain', JSON.stringify({ host: 'nowhere.test' }))).body);
    expect(none).toMatchObject({ routed: false, exitCode: 1 });
    const bad = await post('/explain', JSON.stringify({ host: 'www.example.test', headers: ['nocolon'] }));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({
      error: 'bad_request',
      message: 'route: --header "nocolon": expected NAME:VALUE',
    });
    const unknown = await post('/explain', JSON.stringify({ hots: 'x' }));
    expect(JSON.parse(unknown.body)).toMatchObject({ error: 'bad_request', message: 'admin: unknown field "hots"' });
    expect((await post('/explain', '{')).status).toBe(400);
  });
});

describe('traffic history', () => {
  it('keeps at most `capacity` samples and MAX_SERIES keys per group', async () => {
    const router = await startTestRouter(
      {
        admin: { address: '127.0.0.1:0' },
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      { dir: await tempDir({ 'servers.yaml': '[]\n' }) },
    );
    try {
      const { Metrics } = await import('../../app/metrics/metrics.ts');
      const metrics = new Metrics(router.router.runtime, router.router.panel);
      const history = new TrafficHistory(metrics, router.router.runtime, { capacity: 3 });
      const requests = metrics.registry.getSingleMetric('switchboard_requests_total') as unknown as {
        inc(labels: Record<string, string>, n: number): void;
      };
      await history.sample();
      for (let i = 0; i < 5; i++) {
        for (let k = 0; k < MAX_SERIES + 5; k++) requests.inc({ product: 'p', cluster: `c${k}`, status: '200' }, 1);
        await history.sample();
      }
      const samples = history.since();
      expect(samples).toHaveLength(3);
      expect(samples.map((s) => s.t)).toEqual([...samples.map((s) => s.t)].sort((x, y) => x - y));
      expect(Object.keys(samples[2]!.clusters)).toHaveLength(MAX_SERIES + 1);
      expect(samples[2]!.clusters.other).toBeGreaterThan(0);
      metrics.close();
    } finally {
      await router.close();
    }
  });
});
