/**
 * Backend state across the fleet (issue 43 item 4), with a real etcd and two real routers with
 * `fleet:` on port 0 (plus one without it), over real HTTP:
 *
 * - a fleet drain through r1's admin: within 1 s no new request reaches the backend through
 *   either router (nor through r3, the worker panel with two threads), and a request it was
 *   holding finishes; `/backends` on both shows the override with its scope, who set it and when;
 * - r2 restarted afterwards still has it drained (read before it serves); an enable through r2
 *   undoes it on both; a weight through r1 applies on both;
 * - local scope acts on its router only, and the precedence (the fleet wins, setting by
 *   setting: a local enable does not undo a fleet drain; a fleet enable leaves a local drain);
 * - `scope=fleet` without `fleet:` → 409, a scope the query and body disagree on → 400;
 * - etcd stopped: both keep serving with the last state, a fleet POST answers 503 naming etcd,
 *   a local one still works; a router started meanwhile has no fleet records and reads them
 *   once etcd is back; fleet calls apply on both again;
 * - a record for a backend no router lists yet (written straight to etcd) applies the moment a
 *   config change lists it: the backend never gets a request.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { type HttpAnswer, httpGet } from '../harness/http.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TOKEN = 'fleet-s3cret';

interface LayerView {
  state: string;
  weight: number | null;
  setBy: string;
  setAt: string;
}
interface BackendView {
  id: string;
  mode: string;
  weight: number | null;
  overrides: { fleet: LayerView | null; local: LayerView | null };
  modeScope: string | null;
  weightScope: string | null;
}

/** A request to an admin port with the token (JSON content type for POSTs). */
function call(port: number, method: string, path: string, body?: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const req = request({ port, host: '127.0.0.1', path, method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe.skipIf(etcdBinary() === undefined)('fleet: backend state across routers', () => {
  let etcd: TestEtcd;
  let a: TestBackend;
  let b: TestBackend;
  let r1: TestRouter;
  let r2: TestRouter;
  let r3: TestRouter;
  let plain: TestRouter;
  let dir: string;
  /** Requests /hold that backend a has not answered yet. */
  const held: (() => void)[] = [];
  const prefix = `/swb-fleet-backends-${randomBytes(4).toString('hex')}/`;

  const config = (id: string) => ({
    addressBook: { name: 'file', path: 'servers.yaml' },
    admin: { address: '127.0.0.1:0', token: TOKEN },
    fleet: { id, leaseTtl: '2s', etcd: { endpoints: [etcd.endpoint], prefix, dialTimeout: '500ms' } },
  });
  const adminPort = (r: TestRouter) => r.router.admin!.address().port;
  const enc = (id: string) => encodeURIComponent(id);
  async function view(r: TestRouter, id: string): Promise<BackendView> {
    const all = JSON.parse((await call(adminPort(r), 'GET', '/backends')).body) as { backends: BackendView[] };
    return all.backends.find((x) => x.id === id)!;
  }
  /** Which backends answer `n` requests through `r`, one connection each. */
  async function spread(r: TestRouter, n: number): Promise<Record<string, number>> {
    const seen: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const res = await httpGet(r.port(), '/');
      const name = String(res.headers['x-backend'] ?? res.status);
      seen[name] = (seen[name] ?? 0) + 1;
    }
    return seen;
  }
  const post = (r: TestRouter, path: string, body?: string) => call(adminPort(r), 'POST', path, body);

  beforeAll(async () => {
    etcd = await startEtcd();
    a = await startHttpBackend('a', (req, res, name) => {
      const answer = () => {
        res.writeHead(200, { 'x-backend': name, 'content-type': 'text/plain' });
        res.end(`${name} ${req.url}`);
      };
      if (req.url === '/hold') held.push(answer);
      else answer();
    });
    b = await startHttpBackend('b');
    dir = await tempDir({ 'servers.yaml': `- { host: "*.example.test", backends: [${a.address}, ${b.address}] }\n` });
    r1 = await startTestRouter(config('r1'), { dir });
    r2 = await startTestRouter(config('r2'), { dir });
    r3 = await startTestRouter({ ...config('r3'), panel: { name: 'worker', threads: 2, engine: 'net' } }, { dir });
    const { fleet: _, ...withoutFleet } = config('plain');
    plain = await startTestRouter(withoutFleet, { dir });
  }, 60_000);

  afterAll(async () => {
    for (const r of [r1, r2, r3, plain]) await r?.close();
    await a?.close();
    await b?.close();
    await etcd?.close();
  });

  it('a fleet drain through r1 stops new requests through both within 1 s; a held request finishes', async () => {
    expect(await spread(r2, 4)).toEqual({ a: 2, b: 2 });
    // A request a holds, through r2, before the drain.
    const hold = httpGet(r2.port(), '/hold');
    await eventually(() => held.length === 1, 10_000, 'a to hold the request');
    const res = await post(r1, `/backends/${enc(a.address)}/drain?scope=fleet`);
    const posted = Date.now();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({
      ok: true,
      scope: 'fleet',
      backend: {
        id: a.address,
        mode: 'draining',
        modeScope: 'fleet',
        overrides: { fleet: { state: 'drain', setBy: 'r1' } },
      },
    });
    // The deadline: applied on the other router within 1 s of the call.
    await eventually(async () => (await view(r2, a.address)).mode === 'draining', 1000, 'r2 to apply the drain');
    expect(Date.now() - posted).toBeLessThan(1000);
    const hitsBefore = a.hits;
    expect(await spread(r1, 4)).toEqual({ b: 4 });
    expect(await spread(r2, 4)).toEqual({ b: 4 });
    await eventually(async () => (await view(r3, a.address)).mode === 'draining', 1000, 'r3 to apply the drain');
    expect(await spread(r3, 8)).toEqual({ b: 8 });
    expect(a.hits).toBe(hitsBefore);
    const onR2 = await view(r2, a.address);
    expect(onR2).toMatchObject({ modeScope: 'fleet', weightScope: null, overrides: { local: null } });
    expect(onR2.overrides.fleet).toMatchObject({ state: 'drain', weight: null, setBy: 'r1' });
    expect(Math.abs(Date.parse(onR2.overrides.fleet!.setAt) - posted)).toBeLessThan(60_000);
    held.shift()!();
    const finished = await hold;
    expect({ status: finished.status, body: finished.body }).toEqual({ status: 200, body: 'a /hold' });
  });

  it('a router restarted afterwards still has the backend drained', async () => {
    await r2.close();
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    r2 = await startTestRouter(config('r2'), { dir, runtime: { logger } });
    // The fleet's records were read before the listeners accepted (the panel's `listening` line).
    const msgs = lines.map((l) => JSON.parse(l) as { msg: string; backends?: string[] });
    const read = msgs.findIndex((m) => m.msg === 'fleet: backend overrides applied before serving');
    expect(read).toBeGreaterThanOrEqual(0);
    expect(msgs[read]!.backends).toEqual([a.address]);
    expect(read).toBeLessThan(msgs.findIndex((m) => m.msg === 'listening'));
    expect(await spread(r2, 4)).toEqual({ b: 4 });
    expect(await view(r2, a.address)).toMatchObject({ mode: 'draining', modeScope: 'fleet' });
  });

  it('an enable through r2 (scope in the body) undoes it on both routers', async () => {
    const res = await post(r2, `/backends/${enc(a.address)}/enable`, '{"scope": "fleet"}');
    expect(JSON.parse(res.body)).toMatchObject({ ok: true, scope: 'fleet', backend: { mode: 'up', modeScope: null } });
    await eventually(async () => (await view(r1, a.address)).mode === 'up', 1000, 'r1 to apply the enable');
    expect(await view(r1, a.address)).toMatchObject({ overrides: { fleet: null, local: null } });
    for (const r of [r1, r2]) expect((await spread(r, 4)).a).toBeGreaterThan(0);
    await eventually(async () => (await view(r3, a.address)).mode === 'up', 1000, 'r3 to apply the enable');
  });

  it('a weight change through r1 applies on both; null clears it everywhere', async () => {
    const res = await post(r1, `/backends/${enc(a.address)}/weight?scope=fleet`, '{"weight": 3}');
    expect(JSON.parse(res.body)).toMatchObject({ scope: 'fleet', backend: { weight: 3, weightScope: 'fleet' } });
    await eventually(async () => (await view(r2, a.address)).weight === 3, 1000, 'r2 to apply the weight');
    expect((await view(r2, a.address)).overrides.fleet).toMatchObject({ state: 'enable', weight: 3, setBy: 'r1' });
    expect(await spread(r1, 8)).toEqual({ a: 6, b: 2 });
    expect(await spread(r2, 8)).toEqual({ a: 6, b: 2 });
    await post(r2, `/backends/${enc(a.address)}/weight`, '{"weight": null, "scope": "fleet"}');
    await eventually(async () => (await view(r1, a.address)).weightScope === null, 1000, 'r1 to clear the weight');
    expect(await view(r1, a.address)).toMatchObject({ weight: 1, overrides: { fleet: null } });
  });

  it('local scope (the default) acts on its router only', async () => {
    const res = await post(r1, `/backends/${enc(b.address)}/drain`);
    expect(JSON.parse(res.body)).toMatchObject({
      scope: 'local',
      backend: {
        mode: 'draining',
        modeScope: 'local',
        overrides: { local: { state: 'drain', setBy: 'r1' }, fleet: null },
      },
    });
    expect(await spread(r1, 4)).toEqual({ a: 4 });
    expect(await spread(r2, 4)).toEqual({ a: 2, b: 2 });
    expect(await view(r2, b.address)).toMatchObject({ mode: 'up', modeScope: null, overrides: { local: null } });
    await post(r1, `/backends/${enc(b.address)}/enable?scope=local`);
    expect(await view(r1, b.address)).toMatchObject({ mode: 'up', overrides: { local: null } });
  });

  it('precedence: the fleet wins setting by setting, each layer is cleared in its own scope', async () => {
    const id = enc(b.address);
    // A fleet drain is not undone by a local enable.
    await post(r2, `/backends/${id}/drain?scope=fleet`);
    await eventually(async () => (await view(r1, b.address)).mode === 'draining', 1000, 'r1 to apply the drain');
    const local = JSON.parse((await post(r1, `/backends/${id}/enable`)).body);
    expect(local.backend).toMatchObject({ mode: 'draining', modeScope: 'fleet' });
    // A local weight under it applies (the fleet sets no weight); a fleet weight replaces it.
    await post(r1, `/backends/${id}/weight`, '{"weight": 2}');
    expect(await view(r1, b.address)).toMatchObject({ mode: 'draining', weight: 2, weightScope: 'local' });
    await post(r2, `/backends/${id}/weight?scope=fleet`, '{"weight": 4}');
    await eventually(async () => (await view(r1, b.address)).weight === 4, 1000, 'r1 to apply the fleet weight');
    expect(await view(r1, b.address)).toMatchObject({
      weightScope: 'fleet',
      overrides: { fleet: { state: 'drain', weight: 4, setBy: 'r2' }, local: { state: 'enable', weight: 2 } },
    });
    // The fleet clears its layer: r1's own local weight is back.
    await post(r2, `/backends/${id}/enable?scope=fleet`);
    await post(r2, `/backends/${id}/weight?scope=fleet`, '{"weight": null}');
    await eventually(async () => (await view(r1, b.address)).weightScope === 'local', 1000, 'r1 to fall back to local');
    expect(await view(r1, b.address)).toMatchObject({ mode: 'up', weight: 2, overrides: { fleet: null } });
    // A local drain outlives a fleet enable (it is r1's own).
    await post(r1, `/backends/${id}/drain`);
    await post(r2, `/backends/${id}/drain?scope=fleet`);
    await post(r2, `/backends/${id}/enable?scope=fleet`);
    await eventually(async () => (await view(r1, b.address)).overrides.fleet === null, 1000, 'r1 to see the enable');
    expect(await view(r1, b.address)).toMatchObject({ mode: 'draining', modeScope: 'local' });
    expect(await view(r2, b.address)).toMatchObject({ mode: 'up', modeScope: null });
    await post(r1, `/backends/${id}/enable`);
    await post(r1, `/backends/${id}/weight`, '{"weight": null}');
    expect(await view(r1, b.address)).toMatchObject({ mode: 'up', weight: 1, overrides: { fleet: null, local: null } });
  });

  it('scope=fleet without fleet: is 409; a query and body that disagree are 400', async () => {
    const res = await post(plain, `/backends/${enc(a.address)}/drain?scope=fleet`);
    expect({ status: res.status, error: JSON.parse(res.body).error }).toEqual({
      status: 409,
      error: 'fleet_not_configured',
    });
    expect(JSON.parse(res.body).message).toContain('fleet:');
    expect(await view(plain, a.address)).toMatchObject({ mode: 'up', overrides: { fleet: null, local: null } });
    const local = JSON.parse((await post(plain, `/backends/${enc(a.address)}/drain`)).body);
    expect(local.backend).toMatchObject({
      mode: 'draining',
      modeScope: 'local',
      overrides: { local: { state: 'drain' } },
    });
    await post(plain, `/backends/${enc(a.address)}/enable`);
    for (const [path, body] of [
      ['drain?scope=fleet', '{"scope": "local"}'],
      ['drain?scope=everywhere', undefined],
      ['drain', '{"scope": 1}'],
      ['drain', '{"scope": "fleet", "x": 1}'],
      ['weight', '{"weight": 1, "scope": "all"}'],
    ] as const) {
      const bad = await post(r1, `/backends/${enc(a.address)}/${path}`, body);
      expect({ path, body, status: bad.status, error: JSON.parse(bad.body).error }).toEqual({
        path,
        body,
        status: 400,
        error: 'bad_request',
      });
    }
  });

  it('a record for a backend no router lists yet applies when a config change lists it', async () => {
    const c = await startHttpBackend('c');
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      const record = { state: 'drain', setBy: 'ops', setAt: new Date().toISOString() };
      await client.put(`${prefix}backends/${c.address}`).value(JSON.stringify(record));
      // A later record on a listed backend: once a router shows it, it has seen c's (etcd's order).
      const marker = { state: 'enable', weight: 1, setBy: 'ops', setAt: new Date().toISOString() };
      await client.put(`${prefix}backends/${b.address}`).value(JSON.stringify(marker));
      for (const r of [r1, r2, r3]) {
        await eventually(async () => (await view(r, b.address)).weightScope === 'fleet', 10_000, 'the marker');
      }
      await writeFile(
        join(dir, 'servers.yaml'),
        `- { host: "*.example.test", backends: [${a.address}, ${b.address}, ${c.address}] }\n`,
      );
      for (const r of [r1, r2, r3]) {
        await eventually(async () => (await view(r, c.address)) !== undefined, 10_000, 'the config to list c');
        expect(await view(r, c.address)).toMatchObject({
          mode: 'draining',
          modeScope: 'fleet',
          overrides: { fleet: { state: 'drain', setBy: 'ops' } },
        });
        expect((await spread(r, 6)).c).toBeUndefined();
      }
      expect(c.hits).toBe(0);
      // Cleared straight in etcd too: every router takes c in.
      await client.delete().key(`${prefix}backends/${c.address}`);
      await client.delete().key(`${prefix}backends/${b.address}`);
      for (const r of [r1, r2]) {
        await eventually(async () => (await view(r, c.address)).mode === 'up', 1000, 'the clear to apply');
      }
      expect((await spread(r1, 6)).c).toBeGreaterThan(0);
    } finally {
      client.close();
      await writeFile(
        join(dir, 'servers.yaml'),
        `- { host: "*.example.test", backends: [${a.address}, ${b.address}] }\n`,
      );
      for (const r of [r1, r2, r3]) {
        await eventually(async () => (await view(r, c.address)) === undefined, 10_000, 'the config to drop c');
      }
      await c.close();
    }
  }, 60_000);
  it('etcd stopped: both serve with the last state, a fleet POST is 503 naming etcd; etcd back: it applies again', async () => {
    const id = enc(a.address);
    await post(r1, `/backends/${id}/drain?scope=fleet`);
    await eventually(async () => (await view(r2, a.address)).mode === 'draining', 1000, 'r2 to apply the drain');
    await etcd.stop();
    for (const r of [r1, r2]) expect(await spread(r, 4)).toEqual({ b: 4 });
    const refused = await post(r2, `/backends/${id}/enable?scope=fleet`);
    expect({ status: refused.status, error: JSON.parse(refused.body).error }).toEqual({
      status: 503,
      error: 'fleet_unavailable',
    });
    expect(JSON.parse(refused.body).message).toMatch(/etcd/);
    for (const r of [r1, r2]) expect(await view(r, a.address)).toMatchObject({ mode: 'draining', modeScope: 'fleet' });
    // Local scope does not need etcd.
    expect((await post(r2, `/backends/${enc(b.address)}/weight`, '{"weight": 2}')).status).toBe(200);
    await post(r2, `/backends/${enc(b.address)}/weight`, '{"weight": null}');
    // A router started while etcd is down has no fleet records yet; it applies them once etcd answers.
    await r2.close();
    r2 = await startTestRouter(config('r2'), { dir });
    expect(await view(r2, a.address)).toMatchObject({ mode: 'up', overrides: { fleet: null } });
    await etcd.restart();
    await eventually(async () => (await view(r2, a.address)).mode === 'draining', 20_000, 'r2 to read the drain');
    expect((await view(r2, a.address)).overrides.fleet).toMatchObject({ state: 'drain', setBy: 'r1' });
    await eventually(
      async () => (await post(r2, `/backends/${id}/enable?scope=fleet`)).status === 200,
      20_000,
      'etcd back',
    );
    await eventually(async () => (await view(r1, a.address)).mode === 'up', 10_000, 'r1 to apply the enable');
    for (const r of [r1, r2]) expect((await spread(r, 4)).a).toBeGreaterThan(0);
  }, 60_000);
});
