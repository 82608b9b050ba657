/**
 * Runtime control of one backend through the admin API (issue 19): drain, disable, enable and
 * weight change routing at once, show in /backends and /metrics, survive a reload while the
 * backend stays and go with it; unknown ids answer 404, bad bodies 400, and the token rules of
 * POST /reload apply. Also GET / (the index) and GET /config (secrets redacted).
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type HttpAnswer, httpGet } from '../harness/http.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TOKEN = 's3cret';

/** A request to the admin port with the token, JSON content type for POSTs and an optional body. */
function call(
  port: number,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { port, host: '127.0.0.1', path, method, headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false },
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

interface BackendView {
  id: string;
  state: string;
  mode: string;
  weight: number | null;
  weightOverride: number | null;
  available: boolean;
  healthy: boolean;
  clusters: { cluster: string; weight: number | null; configuredWeight: number | null; rampPercent: number }[];
}

describe('admin: runtime control of one backend', () => {
  let a: TestBackend;
  let b: TestBackend;
  let router: TestRouter;
  let port: number;

  const servers = (ids: string[]) => `- { host: "*.example.test", backends: [${ids.join(', ')}] }\n`;

  async function backends(): Promise<BackendView[]> {
    return (JSON.parse((await call(port, 'GET', '/backends')).body) as { backends: BackendView[] }).backends;
  }
  async function view(id: string): Promise<BackendView> {
    return (await backends()).find((x) => x.id === id)!;
  }
  /** Which backends answer `n` requests, one connection each. */
  async function spread(n: number): Promise<Record<string, number>> {
    const seen: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const res = await httpGet(router.port(), '/');
      const name = String(res.headers['x-backend'] ?? res.status);
      seen[name] = (seen[name] ?? 0) + 1;
    }
    return seen;
  }

  beforeAll(async () => {
    a = await startHttpBackend('a');
    b = await startHttpBackend('b');
    router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '127.0.0.1:0', token: TOKEN } },
      { dir: await tempDir({ 'servers.yaml': servers([a.address, b.address]) }) },
    );
    port = router.router.admin!.address().port;
  });
  afterAll(async () => {
    await router.close();
    await a.close();
    await b.close();
  });

  it('drain sends no new request to the backend; enable brings it back', async () => {
    expect(await spread(4)).toEqual({ a: 2, b: 2 });
    const res = await call(port, 'POST', `/backends/${b.address}/drain`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ ok: true, backend: { id: b.address, state: 'draining' } });
    expect(await spread(6)).toEqual({ a: 6 });
    expect(await view(b.address)).toMatchObject({
      state: 'draining',
      mode: 'draining',
      available: false,
      healthy: true,
    });
    // Its connections close as their clients go: then it is drained.
    const single = async () =>
      JSON.parse((await call(port, 'GET', `/backends/${encodeURIComponent(b.address)}`)).body).backend;
    await waitFor(async () => (await single()).drained === true);
    expect(await single()).toMatchObject({ id: b.address, state: 'draining', drained: true, active: 0 });
    expect((await call(port, 'GET', '/backends/127.0.0.1:1')).status).toBe(404);
    const enabled = await call(port, 'POST', `/backends/${encodeURIComponent(b.address)}/enable`);
    expect(JSON.parse(enabled.body)).toMatchObject({ ok: true, backend: { state: 'up', available: true } });
    expect((await spread(4)).b).toBeGreaterThan(0);
  });

  it('disable takes the backend out of service, reported as disabled (URL-encoded id)', async () => {
    await call(port, 'POST', `/backends/${encodeURIComponent(a.address)}/disable`);
    expect(await spread(4)).toEqual({ b: 4 });
    expect(await view(a.address)).toMatchObject({ state: 'disabled', available: false });
    await call(port, 'POST', `/backends/${a.address}/enable`);
  });

  it('weight overrides the configured weight in every pool; null clears it', async () => {
    const res = await call(port, 'POST', `/backends/${a.address}/weight`, '{"weight": 0}');
    expect(JSON.parse(res.body)).toMatchObject({
      ok: true,
      backend: { weight: 0, weightOverride: 0, clusters: [{ weight: 0, configuredWeight: 1 }] },
    });
    expect(await spread(4)).toEqual({ b: 4 });
    await call(port, 'POST', `/backends/${a.address}/weight`, '{"weight": 3}');
    const three = await spread(8);
    expect(three).toEqual({ a: 6, b: 2 });
    await call(port, 'POST', `/backends/${a.address}/weight`, '{"weight": null}');
    expect(await view(a.address)).toMatchObject({ weight: 1, weightOverride: null });
  });

  it('shows the state and the override in /metrics', async () => {
    await call(port, 'POST', `/backends/${b.address}/drain`);
    await call(port, 'POST', `/backends/${a.address}/weight`, '{"weight": 5}');
    const text = (await call(port, 'GET', '/metrics')).body;
    expect(text).toContain(`switchboard_backend_state{backend="${b.address}",state="draining"} 1`);
    expect(text).toContain(`switchboard_backend_state{backend="${b.address}",state="up"} 0`);
    expect(text).toContain(`switchboard_backend_state{backend="${a.address}",state="up"} 1`);
    expect(text).toContain(`switchboard_backend_weight_override{backend="${a.address}"} 5`);
    await call(port, 'POST', `/backends/${b.address}/enable`);
    await call(port, 'POST', `/backends/${a.address}/weight`, '{"weight": null}');
  });

  it('answers 404 for an unknown id, 400 for a bad body, 405 for GET, and applies the token rules', async () => {
    const unknown = await call(port, 'POST', '/backends/127.0.0.1:1/drain');
    expect({ status: unknown.status, code: unknown.headers['x-switchboard-error'] }).toEqual({
      status: 404,
      code: 'backend_not_found',
    });
    expect(JSON.parse(unknown.body)).toMatchObject({ ok: false, error: 'backend_not_found' });
    for (const body of [
      '{"weight": -1}',
      '{"weight": 1.5}',
      '{"weight": "2"}',
      '{}',
      '[]',
      'nope',
      '',
      '{"weight":1,"x":2}',
    ]) {
      const res = await call(port, 'POST', `/backends/${a.address}/weight`, body);
      expect({ body, status: res.status, code: JSON.parse(res.body).error }).toEqual({
        body,
        status: 400,
        code: 'bad_request',
      });
    }
    expect((await call(port, 'POST', `/backends/${a.address}/weight`, 'x'.repeat(5000))).status).toBe(400);
    expect((await call(port, 'POST', '/backends/%E0%A4%A/drain')).status).toBe(400);
    expect((await call(port, 'GET', `/backends/${a.address}/drain`)).status).toBe(405);
    const noToken = await call(port, 'POST', `/backends/${a.address}/drain`, '', {
      'content-type': 'application/json',
    });
    expect(noToken.status).toBe(401);
    const form = await call(port, 'POST', `/backends/${a.address}/drain`, '', {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'text/plain',
    });
    expect(form.status).toBe(415);
    const crossSite = await call(port, 'POST', `/backends/${a.address}/drain`, '', {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      origin: 'http://evil.test',
    });
    expect(crossSite.status).toBe(403);
    expect((await view(a.address)).state).toBe('up');
  });

  it('keeps the state across a reload while the backend stays, and drops it when it leaves', async () => {
    await call(port, 'POST', `/backends/${b.address}/drain`);
    await call(port, 'POST', `/backends/${b.address}/weight`, '{"weight": 7}');
    await writeFile(join(router.dir, 'switchboard.yaml'), `${await configText()}\n# touched\n`);
    expect(await router.router.reload()).toMatchObject({ ok: true, changed: true });
    expect(await view(b.address)).toMatchObject({ state: 'draining', weightOverride: 7 });
    expect(await spread(3)).toEqual({ a: 3 });

    await writeFile(join(router.dir, 'servers.yaml'), servers([a.address]));
    await waitFor(async () => (await backends()).length === 1);
    await writeFile(join(router.dir, 'servers.yaml'), servers([a.address, b.address]));
    await waitFor(async () => (await backends()).length === 2);
    expect(await view(b.address)).toMatchObject({ state: 'up', weightOverride: null });
  });

  it('GET / lists every endpoint, as JSON or as text', async () => {
    const json = JSON.parse((await call(port, 'GET', '/')).body) as { endpoints: { method: string; path: string }[] };
    const keys = json.endpoints.map((e) => `${e.method} ${e.path}`);
    for (const k of ['GET /backends', 'POST /reload', 'GET /config', 'POST /backends/{id}/weight']) {
      expect(keys).toContain(k);
    }
    const text = await call(port, 'GET', '/', undefined, { authorization: `Bearer ${TOKEN}`, accept: 'text/plain' });
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body).toMatch(/^POST\s+\/backends\/\{id\}\/drain\s+no new connections/m);
  });

  it('GET /config is the effective config with the admin token redacted', async () => {
    const res = await call(port, 'GET', '/config');
    expect(res.body).not.toContain(TOKEN);
    const body = JSON.parse(res.body) as { config: Record<string, Record<string, unknown>> };
    expect(body.config.admin).toMatchObject({ token: '<redacted>', open: ['/healthz', '/readyz'] });
    expect(body.config.limits).toMatchObject({ connectTimeout: 2000 });
    expect(body.config.addressBook).toMatchObject({ name: 'file', path: 'servers.yaml', watch: true });
  });

  async function configText(): Promise<string> {
    const { readFile } = await import('node:fs/promises');
    return readFile(join(router.dir, 'switchboard.yaml'), 'utf8');
  }
  async function waitFor(check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 500 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await check()).toBe(true);
  }
});
