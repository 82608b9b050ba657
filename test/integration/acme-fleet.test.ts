/**
 * ACME across a fleet (issue 43 item 2) with a real etcd, Debian's pebble and real validation:
 * three routers, one name → one order, validated by a router that did not order, served by all
 * three within 2 s of the certificate reaching etcd; three started together → one order
 * (TLS-ALPN-01 answered from etcd); a restart of all three → no order; a failed order backs
 * the fleet off; the lock holder SIGKILLed mid-order → another router orders after the lease
 * ran out; private keys in etcd are never PEM; etcd stopped → every router keeps serving. A
 * relay in front of pebble's validation ports (held-relay.ts) decides which router answers,
 * and when.
 */
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createLogger } from '../../src/base/log.ts';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CliRouter, spawnCli } from '../harness/cli.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { type HeldRelay, startHeldRelay } from '../harness/held-relay.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const KEY = Buffer.alloc(32, 7).toString('base64');

function handshake(port: number, servername: string, ca: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername, ca, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
    s.once('error', reject);
  });
}

/** The fingerprint a verified handshake for `name` presents, or undefined (unverified, refused). */
async function served(port: number, name: string, ca: string): Promise<string | undefined> {
  try {
    const s = await handshake(port, name, ca);
    const fp = s.authorized ? new X509Certificate(s.getPeerX509Certificate()!.raw).fingerprint256 : undefined;
    s.destroy();
    return fp;
  } catch {
    return undefined;
  }
}

interface Ports {
  readonly web: number;
  readonly tls: number;
}

describe.skipIf(!pebbleAvailable() || etcdBinary() === undefined)('acme across a fleet', () => {
  let etcd: TestEtcd;
  let pebble: Pebble;
  let backend: TestBackend;
  let httpRelay: HeldRelay;
  let alpnRelay: HeldRelay;
  let etcdClient: Etcd3;
  let root: string;
  const open: TestRouter[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    etcdClient = new Etcd3({ hosts: etcd.endpoint });
    httpRelay = await startHeldRelay(await closedPort());
    alpnRelay = await startHeldRelay(await closedPort());
    pebble = await startPebble({ httpPort: httpRelay.port, tlsPort: alpnRelay.port, validitySeconds: 3600 });
    root = await pebble.root();
    backend = await startHttpBackend('b');
  }, 60_000);
  afterAll(async () => {
    for (const r of open.splice(0)) await r.close().catch(() => undefined);
    etcdClient?.close();
    await backend?.close();
    await pebble?.close();
    await httpRelay?.close();
    await alpnRelay?.close();
    await etcd?.close();
  });

  const ports = async (): Promise<Ports> => ({ web: await closedPort(), tls: await closedPort() });

  /** How one router differs: its challenge type, lease (and lock) TTL, panel, and a log to keep. */
  interface Options {
    readonly challenge?: 'http-01' | 'tls-alpn-01';
    readonly leaseTtl?: string;
    readonly panel?: Record<string, unknown>;
    readonly lines?: string[];
  }

  const config = (id: string, p: Ports, prefix: string, name: string, o: Options = {}) => ({
    panel: o.panel ?? { name: 'net' },
    listeners: [
      { name: 'web', address: `127.0.0.1:${p.web}` },
      {
        name: 'tls',
        address: `127.0.0.1:${p.tls}`,
        tls: 'terminate',
        acme: {
          directory: pebble.directory,
          names: [name],
          challenge: o.challenge ?? 'http-01',
          storage: 'acme',
          renewBefore: '1m',
          ca: pebble.caFile,
        },
      },
    ],
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: [name], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
    fleet: {
      id,
      leaseTtl: o.leaseTtl ?? '2s',
      etcd: { endpoints: [etcd.endpoint], prefix, dialTimeout: '500ms' },
      encryptionKey: KEY,
    },
  });

  async function start(id: string, p: Ports, prefix: string, name: string, o: Options = {}): Promise<TestRouter> {
    const { lines } = o;
    const logger = lines === undefined ? undefined : createLogger('info', { write: (l: string) => void lines.push(l) });
    const r = await startTestRouter(config(id, p, prefix, name, o), {
      dir: await tempDir(),
      ...(logger !== undefined ? { runtime: { logger } } : {}),
    });
    open.push(r);
    return r;
  }

  const stateOf = (r: TestRouter, name: string) => r.router.acme.status().find((s) => s.name === name);
  const etcdGet = (key: string) => etcdClient.get(key).string();
  const challengesAnswered = (r: TestRouter) => r.access.filter((a) => a.result === 'acme_challenge').length;

  it('three routers, one name: one order, validated by a router that did not order, served by all three within 2 s', async () => {
    const prefix = '/t1/fleet/';
    const name = 'one.fleet.test';
    const [p1, p2, p3] = [await ports(), await ports(), await ports()];
    const ordersBefore = pebble.orders();
    httpRelay.steer(undefined);
    // A lease (and lock retry) of 10 s: within the 2 s below, only the watch can bring the certificate.
    const r1 = await start('r1', p1!, prefix, name, { leaseTtl: '10s' });
    // r1 holds the lock and has asked the CA to validate: the validation waits in the relay.
    await eventually(() => httpRelay.held() >= 1, 60_000, 'pebble validating through the relay');
    expect(await etcdGet(`${prefix}locks/acme/order/${name}`)).toBe('r1');
    // r2 answers the validation from worker threads: the fleet's challenges reach every thread.
    const r2 = await start('r2', p2!, prefix, name, {
      leaseTtl: '10s',
      panel: { name: 'worker', threads: 2, engine: 'net' },
    });
    const r3 = await start('r3', p3!, prefix, name, { leaseTtl: '10s' });
    // Both asked for the lock and found it taken.
    for (const r of [r2, r3])
      await eventually(() => /another router holds/.test(stateOf(r, name)?.lastError ?? ''), 20_000, 'lock busy');
    httpRelay.steer(p2!.web);
    // The certificate reaches etcd; from then on every router serves it within 2 s.
    await eventually(async () => (await etcdGet(`${prefix}acme/certs/${name}`)) !== null, 60_000, 'stored');
    await eventually(
      async () => {
        const fps = await Promise.all([p1, p2, p3].map((p) => served(p!.tls, name, root)));
        return fps[0] !== undefined && fps.every((f) => f === fps[0]);
      },
      2_000,
      'all three serve the certificate',
    );
    httpRelay.steer(undefined);
    expect(pebble.orders() - ordersBefore).toBe(1);
    // r2 answered the validation; r1 (who ordered) never saw it.
    expect(challengesAnswered(r2)).toBeGreaterThanOrEqual(1);
    expect(challengesAnswered(r1)).toBe(0);
    const stored = JSON.parse((await etcdGet(`${prefix}acme/certs/${name}`))!) as { key: string; by: string };
    expect(stored.by).toBe('r1');
    for (const r of [r1, r2, r3]) expect(stateOf(r, name)?.state).toBe('valid');
    // Private keys are never in clear in etcd: the certificate's and the account's.
    const all = await etcdClient.getAll().prefix(prefix).strings();
    expect(Object.keys(all)).toContain(`${prefix}acme/account/key`);
    for (const [k, v] of Object.entries(all)) expect(v, k).not.toMatch(/PRIVATE KEY/);
    expect(stored.key).toMatch(/^aes-256-gcm:/);
    expect(all[`${prefix}acme/account/key`]).toMatch(/^aes-256-gcm:/);
    for (const r of [r1, r2, r3]) await r.close();
    open.length = 0;
  }, 120_000);

  it('three routers started together: one order (tls-alpn-01 answered from etcd); restarted: no order; etcd down: still served', async () => {
    const prefix = '/t2/fleet/';
    const name = 'together.fleet.test';
    const ps = [await ports(), await ports(), await ports()];
    alpnRelay.steer(undefined);
    const ordersBefore = pebble.orders();
    const routers = await Promise.all(
      ps.map((p, i) => start(`r${i + 1}`, p, prefix, name, { challenge: 'tls-alpn-01' })),
    );
    // One of them validates (held in the relay) while the two others found the lock taken.
    await eventually(() => alpnRelay.held() >= 1, 60_000, 'pebble validating through the relay');
    const busy = () => routers.filter((r) => /another router holds/.test(stateOf(r, name)?.lastError ?? '')).length;
    await eventually(() => busy() === 2, 20_000, 'two routers find the lock taken');
    alpnRelay.steer(ps[2]!.tls);
    await eventually(() => routers.every((r) => stateOf(r, name)?.state === 'valid'), 60_000, 'all valid');
    expect(pebble.orders() - ordersBefore).toBe(1);
    const fps = await Promise.all(ps.map((p) => served(p.tls, name, root)));
    expect(fps[0]).toBeDefined();
    expect(new Set(fps).size).toBe(1);
    for (const r of routers) await r.close();
    open.length = 0;

    // A restart of all three: the certificate comes from etcd, nothing is ordered.
    const lines: string[] = [];
    const again = await Promise.all(
      ps.map((p, i) =>
        start(`r${i + 1}`, p, prefix, name, { challenge: 'tls-alpn-01', ...(i === 0 ? { lines } : {}) }),
      ),
    );
    await eventually(() => again.every((r) => stateOf(r, name)?.state === 'valid'), 20_000, 'valid again');
    expect(await Promise.all(ps.map((p) => served(p.tls, name, root)))).toEqual(fps);
    expect(pebble.orders() - ordersBefore).toBe(1);

    // etcd stopped: every router keeps serving its certificate; the log says why no order is placed.
    await etcd.stop();
    try {
      await eventually(() => again.every((r) => r.router.fleet?.degraded === true), 20_000, 'degraded');
      expect(await Promise.all(ps.map((p) => served(p.tls, name, root)))).toEqual(fps);
      await eventually(() => lines.some((l) => l.includes('acme: etcd unreachable')), 10_000, 'acme log line');
    } finally {
      await etcd.restart();
    }
    await eventually(() => again.every((r) => r.router.fleet?.degraded === false), 20_000, 'etcd back');
    expect(pebble.orders() - ordersBefore).toBe(1);
    for (const r of again) await r.close();
    open.length = 0;
    alpnRelay.steer(undefined);
  }, 180_000);

  it('a failed order backs the whole fleet off: the next lock holder waits instead of ordering again', async () => {
    const prefix = '/t4/fleet/';
    const name = 'failing.fleet.test';
    const [p1, p2] = [await ports(), await ports()];
    // Validation reaches a closed port: the CA's check fails.
    httpRelay.steer(await closedPort());
    const ordersBefore = pebble.orders();
    try {
      const routers = await Promise.all([start('r1', p1!, prefix, name), start('r2', p2!, prefix, name)]);
      const waiting = () =>
        routers.filter((r) => /the fleet's last order failed/.test(stateOf(r, name)?.lastError ?? ''));
      await eventually(() => waiting().length === 1, 30_000, 'the other router backs off');
      expect(pebble.orders() - ordersBefore).toBe(1);
      const record = JSON.parse((await etcdGet(`${prefix}acme/failures/${name}`))!) as {
        failures: number;
        retryAt: number;
      };
      expect(record.failures).toBe(1);
      // 30 s after the failure (acme's first retry), not one lease TTL.
      expect(record.retryAt - Date.now()).toBeGreaterThan(20_000);
      const other = waiting()[0]!;
      expect(stateOf(other, name)?.failures).toBe(0);
      for (const r of routers) await r.close();
      open.length = 0;
    } finally {
      httpRelay.steer(undefined);
    }
  }, 120_000);

  it('a start with fleet: and acme: but no encryption key is refused, naming fleet.encryptionKey', async () => {
    const full = config('nokey', await ports(), '/t5/fleet/', 'nokey.fleet.test');
    const { encryptionKey: _, ...fleet } = full.fleet;
    await expect(startTestRouter({ ...full, fleet }, { dir: await tempDir() })).rejects.toMatchObject({
      code: 'SWB_ERR_CONFIG',
      message: expect.stringMatching(/^fleet\.encryptionKey: required with listeners\[1\]\.acme/),
    });
  });

  it('the lock holder SIGKILLed mid-order: another router orders once its lease ran out', async () => {
    const prefix = '/t3/fleet/';
    const name = 'killed.fleet.test';
    const [p1, p2] = [await ports(), await ports()];
    httpRelay.steer(undefined);
    const ordersBefore = pebble.orders();
    const dir = await tempDir();
    const file = join(dir, 'switchboard.yaml');
    await writeFile(file, stringify(config('c1', p1!, prefix, name)));
    const child: CliRouter = spawnCli(file);
    try {
      await eventually(() => httpRelay.held() >= 1, 60_000, 'c1 mid-order (validation held)');
      expect(await etcdGet(`${prefix}locks/acme/order/${name}`)).toBe('c1');
      const r2 = await start('r2', p2!, prefix, name);
      await eventually(() => /another router holds/.test(stateOf(r2, name)?.lastError ?? ''), 20_000, 'lock busy');
      child.kill('SIGKILL');
      await child.exited;
      // c1's validation dies with it; r2 answers everything from now on.
      httpRelay.dropHeld();
      httpRelay.steer(p2!.web);
      await eventually(() => stateOf(r2, name)?.state === 'valid', 60_000, 'r2 completes the order');
      const stored = JSON.parse((await etcdGet(`${prefix}acme/certs/${name}`))!) as { by: string };
      expect(stored.by).toBe('r2');
      expect(pebble.orders() - ordersBefore).toBe(2);
      expect(await served(p2!.tls, name, root)).toBeDefined();
    } finally {
      child.kill('SIGKILL');
      httpRelay.steer(undefined);
    }
  }, 120_000);
});
