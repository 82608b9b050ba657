/**
 * The fleet's membership through a real etcd (issue 43 step 1): routers with `fleet:` see each
 * other in `GET /fleet` with their version and config hash; a reload changes the hash the others
 * see; a router closed disappears at once (lease revoked), one SIGKILLed after its lease TTL;
 * an id in use refuses the start; etcd stopped makes the fleet degraded (/fleet, /metrics,
 * /readyz, the log) while traffic is still served, and etcd back clears it. Without `fleet:`
 * the etcd3 module is never loaded.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const PACKAGE_VERSION = (await import('../../package.json', { with: { type: 'json' } })).default.version;

interface FleetAnswer {
  id: string;
  degraded: boolean;
  members: { id: string; version: string; configHash: string; listeners: string[]; seenAt: string; self: boolean }[];
}

const OPEN = ['/healthz', '/readyz', '/metrics', '/fleet'];

function adminPort(r: TestRouter): number {
  const admin = r.router.admin;
  if (admin === undefined) throw new Error('no admin listener');
  return admin.address().port;
}

async function fleetOf(r: TestRouter): Promise<FleetAnswer> {
  const res = await httpGet(adminPort(r), '/fleet', { host: '127.0.0.1' });
  expect(res.status).toBe(200);
  return JSON.parse(res.body) as FleetAnswer;
}

const ids = async (r: TestRouter) => (await fleetOf(r)).members.map((m) => m.id);

describe.skipIf(etcdBinary() === undefined)('fleet: membership in etcd', () => {
  let etcd: TestEtcd;
  let backend: TestBackend;
  let prefix = 0;
  const open: TestRouter[] = [];

  /** The test's own view of etcd. */
  let client: Etcd3;

  beforeAll(async () => {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
    backend = await startHttpBackend('b');
  });
  afterAll(async () => {
    for (const r of open.splice(0)) await r.close().catch(() => undefined);
    client?.close();
    await backend?.close();
    await etcd?.close();
  });

  /** A fleet section on its own prefix per test, so tests do not see each other's members. */
  const fleet = (id: string | undefined, p: number, extra: Record<string, unknown> = {}) => ({
    ...(id !== undefined ? { id } : {}),
    leaseTtl: '2s',
    etcd: { endpoints: [etcd.endpoint], prefix: `/test${p}/fleet/`, dialTimeout: '500ms' },
    ...extra,
  });

  async function start(id: string | undefined, p: number, lines?: string[]): Promise<TestRouter> {
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const logger = lines === undefined ? undefined : createLogger('info', { write: (l: string) => void lines.push(l) });
    const r = await startTestRouter(
      {
        addressBook: { name: 'file', path: 'servers.yaml' },
        admin: { address: '127.0.0.1:0', open: OPEN },
        fleet: fleet(id, p),
      },
      { dir, ...(logger !== undefined ? { runtime: { logger } } : {}) },
    );
    open.push(r);
    return r;
  }

  it('two routers see each other with version and config hash; a reload changes the hash; a closed one leaves at once', async () => {
    const p = ++prefix;
    const a = await start('a', p);
    const b = await start(undefined, p);
    const bId = b.router.fleet?.id ?? '';
    expect(bId).toMatch(new RegExp(`@127\\.0\\.0\\.1:${b.port()}$`));
    await eventually(async () => (await ids(a)).length === 2, 10_000, 'a to see b');
    const seen = await fleetOf(a);
    expect(seen.id).toBe('a');
    expect(seen.degraded).toBe(false);
    const mb = seen.members.find((m) => m.id === bId)!;
    const bHash = b.router.runtime.engine.version.split('@')[0]!;
    expect(mb).toMatchObject({ version: PACKAGE_VERSION, configHash: bHash, self: false });
    expect(mb.listeners).toEqual([`127.0.0.1:${b.port()}`]);
    expect(seen.members.find((m) => m.id === 'a')).toMatchObject({ self: true });

    // A reload of b (new config text) → a sees b's new config hash.
    const file = join(b.dir, 'switchboard.yaml');
    const config = {
      listeners: [{ name: 'web', address: `127.0.0.1:${b.port()}` }],
      addressBook: { name: 'file', path: 'servers.yaml' },
      admin: { address: `127.0.0.1:${adminPort(b)}`, open: OPEN },
      fleet: fleet(undefined, p),
      limits: { drainTimeout: '2s' },
    };
    await writeFile(file, stringify(config));
    const result = await b.router.reload();
    expect(result.errors).toEqual([]);
    const newHash = result.version.split('@')[0]!;
    expect(newHash).not.toBe(bHash);
    await eventually(
      async () => (await fleetOf(a)).members.find((m) => m.id === bId)?.configHash === newHash,
      10_000,
      'a to see b reloaded',
    );

    // Changing the fleet section on reload is refused (a restart makes a new member).
    await writeFile(file, stringify({ ...config, fleet: fleet('other', p) }));
    const refused = await b.router.reload();
    expect(refused.ok).toBe(false);
    expect(refused.errors.join('\n')).toMatch(/fleet: changing the fleet section needs a restart/);

    // b closes: its lease is revoked, so its key is gone the moment close() resolves (a lease
    // left to expire would keep it for up to 2 s), and a's watch drops it.
    const key = `/test${p}/fleet/members/${bId}`;
    expect((await client.get(key).exec()).kvs).toHaveLength(1);
    await b.close();
    open.splice(open.indexOf(b), 1);
    expect((await client.get(key).exec()).kvs).toHaveLength(0);
    await eventually(async () => (await ids(a)).length === 1, 10_000, 'b to leave');
    expect(await ids(a)).toEqual(['a']);
  });

  it('the same id twice: the second refuses to start, naming the id', async () => {
    const p = ++prefix;
    await start('same', p);
    await expect(start('same', p)).rejects.toThrow(/fleet\.id: same is in use by another live router/);
  });

  it('a SIGKILLed router disappears after its lease TTL', async () => {
    const p = ++prefix;
    const a = await start('a', p);
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const file = join(dir, 'switchboard.yaml');
    await writeFile(
      file,
      stringify({
        listeners: [{ name: 'web', address: '127.0.0.1:0' }],
        addressBook: { name: 'file', path: 'servers.yaml' },
        fleet: fleet('child', p),
        log: { format: 'json' },
      }),
    );
    const child = spawnCli(file);
    try {
      await child.waitForLog((l) => l.msg === 'fleet: member');
      await eventually(async () => (await ids(a)).includes('child'), 10_000, 'a to see the child');
      child.kill('SIGKILL');
      await child.exited;
      const killedAt = Date.now();
      await eventually(async () => !(await ids(a)).includes('child'), 10_000, 'the child to expire');
      // Not revoked (it had no chance): gone by the lease's expiry, 2 s.
      expect(Date.now() - killedAt).toBeGreaterThan(500);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('etcd stopped: degraded in /fleet, /metrics, /readyz and the log, traffic served; etcd back: cleared', async () => {
    const p = ++prefix;
    const lines: string[] = [];
    const a = await start('a', p, lines);
    const admin = adminPort(a);
    await eventually(async () => (await ids(a)).includes('a'), 10_000, 'a registered');
    expect((await httpGet(admin, '/readyz', { host: '127.0.0.1' })).body).toBe('ready\n');
    await etcd.stop();
    try {
      await eventually(async () => (await fleetOf(a)).degraded, 15_000, 'degraded');
      const metrics = (await httpGet(admin, '/metrics', { host: '127.0.0.1' })).body;
      expect(metrics).toMatch(/^switchboard_fleet_degraded 1$/m);
      expect(metrics).toMatch(/^switchboard_fleet_members 1$/m);
      const ready = await httpGet(admin, '/readyz', { host: '127.0.0.1' });
      expect(ready.status).toBe(200);
      expect(ready.body).toBe('ready (fleet degraded: etcd unreachable)\n');
      const warned = lines.filter((l) => l.includes('fleet degraded: etcd unreachable'));
      expect(warned).toHaveLength(1);
      // Serving never depends on etcd.
      const hits = backend.hits;
      const res = await httpGet(a.port(), '/');
      expect(res.status).toBe(200);
      expect(backend.hits).toBe(hits + 1);
    } finally {
      await etcd.restart();
    }
    await eventually(async () => !(await fleetOf(a)).degraded, 20_000, 'degraded to clear');
    await eventually(async () => (await ids(a)).includes('a'), 10_000, 'a registered again');
    expect((await httpGet(admin, '/metrics', { host: '127.0.0.1' })).body).toMatch(/^switchboard_fleet_degraded 0$/m);
    expect((await httpGet(admin, '/readyz', { host: '127.0.0.1' })).body).toBe('ready\n');
    expect(lines.some((l) => l.includes('fleet: etcd reachable again'))).toBe(true);
  });

  it('etcd down at start: the router starts and serves, degraded, and becomes a member when etcd answers', async () => {
    const p = ++prefix;
    await etcd.stop();
    let a: TestRouter;
    try {
      a = await start('late', p);
      expect(a.router.fleet?.degraded).toBe(true);
      expect((await fleetOf(a)).members).toEqual([]);
      expect((await httpGet(a.port(), '/')).status).toBe(200);
    } finally {
      await etcd.restart();
    }
    await eventually(async () => (await ids(a)).includes('late'), 20_000, 'late to register');
    expect((await fleetOf(a)).degraded).toBe(false);
  });

  it('GET /fleet without fleet: answers 404 { fleet: false }', async () => {
    const r = await startTestRouter({ admin: { address: '127.0.0.1:0', open: OPEN } });
    open.push(r);
    const res = await httpGet(adminPort(r), '/fleet', { host: '127.0.0.1' });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ fleet: false });
  });

  it('without fleet: the etcd3 module is never loaded (with it, it is)', async () => {
    const probe = async (withFleet: boolean) => {
      const dir = await tempDir();
      const file = join(dir, 'switchboard.yaml');
      await writeFile(
        file,
        stringify({
          listeners: [{ name: 'web', address: '127.0.0.1:0' }],
          log: { format: 'json' },
          ...(withFleet ? { fleet: fleet('probe', ++prefix) } : {}),
        }),
      );
      const child = spawnCli(file, {
        nodeArgs: ['--import', './test/harness/module-probe.mjs'],
        env: { SWB_PROBE_PACKAGES: 'etcd3,redis,@grpc/grpc-js' },
      });
      try {
        await child.waitForLog((l) => l.msg === 'switchboard started');
        return child.logs.filter((l) => String(l.msg).startsWith('module-probe:')).map((l) => l.msg);
      } finally {
        child.kill('SIGTERM');
        await child.exited;
      }
    };
    expect(await probe(false)).toEqual([]);
    expect(await probe(true)).toContain('module-probe: loaded etcd3');
  });
});
