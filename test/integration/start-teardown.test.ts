/**
 * What `startLoaded` started is closed, last started first, whatever step fails and on
 * shutdown (app/started-parts.ts, issue 41 item 4). The failing step here is the admin
 * listener on a port already taken: its port is held from before the data listeners bind
 * (app/port-hold.ts, issue 45 item 8), so the start fails before any of them binds or logs
 * `listening`, and before the ACME manager (against pebble) starts. Seen from outside: the
 * data ports stay free, the debug log names each part closed in reverse order, and nothing is
 * ordered from the CA.
 *
 * A step after `panel.start()` fails for real too: the fleet (app/fleet/, a real etcd) refuses
 * the start because another live router holds its `fleet.id` (FleetIdInUseError), after the
 * data listeners are bound (a client connects to each) and the admin port is held. The teardown
 * closes those connections (the panel destroyed), frees every port, leaves no TCP handle behind
 * (the fleet's and the backend-state preload's etcd clients closed) and names each part closed,
 * last started first.
 */
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/base/log.ts';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const NAME = 'teardown.acme.test';

/** Listens on 127.0.0.1:`port` (0: any); resolves with the server once bound. */
function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** True when 127.0.0.1:`port` can be bound (and it is released again). */
async function free(port: number): Promise<boolean> {
  const server = await listenOn(port).catch(() => undefined);
  if (server === undefined) return false;
  await closeServer(server);
  return true;
}

/** True when connecting to 127.0.0.1:`port` is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

/** The `part` of every log line with message `msg`, in order. */
function partsLogged(lines: readonly string[], msg: string): string[] {
  return lines
    .map((l) => JSON.parse(l) as { msg?: string; part?: string })
    .filter((l) => l.msg === msg)
    .map((l) => l.part ?? '');
}

describe.skipIf(!pebbleAvailable())('start closes what it started', () => {
  let pebble: Pebble;
  let backend: TestBackend;
  let ports: { web: number; tls: number };

  const config = (adminPort: number, panel: Record<string, unknown>) => ({
    panel,
    log: { level: 'debug', format: 'json' },
    admin: { address: `127.0.0.1:${adminPort}` },
    listeners: [
      { name: 'web', address: `127.0.0.1:${ports.web}` },
      {
        name: 'tls',
        address: `127.0.0.1:${ports.tls}`,
        tls: 'terminate',
        acme: {
          directory: pebble.directory,
          names: [NAME],
          challenge: 'tls-alpn-01',
          storage: 'acme',
          ca: pebble.caFile,
        },
      },
    ],
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: [NAME], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
  });

  beforeAll(async () => {
    ports = { web: await closedPort(), tls: await closedPort() };
    pebble = await startPebble({ httpPort: ports.web, tlsPort: ports.tls, validitySeconds: 3600 });
    backend = await startHttpBackend('b');
  }, 30_000);
  afterAll(async () => {
    await backend?.close();
    await pebble?.close();
  });

  it.each([
    ['net', { name: 'net' }],
    ['worker (net, 2 threads)', { name: 'worker', threads: 2, engine: 'net' }],
  ])(
    'the admin port is taken: every started part is closed, last first, and the start fails: %s',
    async (_label, panel) => {
      const taken = await listenOn(0);
      const adminPort = (taken.address() as { port: number }).port;
      const lines: string[] = [];
      const logger = createLogger('debug', { write: (s: string) => void lines.push(s) });
      try {
        await expect(
          startTestRouter(config(adminPort, panel), { dir: await tempDir(), runtime: { logger } }),
        ).rejects.toMatchObject({ code: 'SWB_ERR_LISTEN', message: expect.stringContaining('admin.address') });

        // No data listener was bound (none logged `listening`), so their ports are free.
        expect(lines.filter((l) => l.includes('"msg":"listening"'))).toEqual([]);
        await eventually(async () => (await free(ports.web)) && (await free(ports.tls)), 10_000, 'data ports free');
        // The ACME manager never asks the CA; a manager left running orders within this window
        // (its first order starts at once: no certificate is stored).
        await new Promise((r) => setTimeout(r, 3_000));
        expect(pebble.orders()).toBe(0);
        expect(lines.filter((l) => l.includes('acme: ordering'))).toEqual([]);

        // Every part that started, named in the debug log as it closed, last started first.
        expect(partsLogged(lines, 'start failed: closed')).toEqual(['backend states', 'metrics', 'runtime']);
      } finally {
        await closeServer(taken);
      }
    },
    60_000,
  );

  it('shutdown closes the same parts, last first: readiness off, the panel drained, then the admin listener', async () => {
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (s: string) => void lines.push(s) });
    const router = await startTestRouter(config(0, { name: 'net' }), { dir: await tempDir(), runtime: { logger } });
    await router.close();
    expect(partsLogged(lines, 'closed')).toEqual([
      'readiness',
      'reloader',
      'acme',
      'panel',
      'backend states',
      'admin listener',
      'metrics',
      'runtime',
    ]);
    expect((await free(ports.web)) && (await free(ports.tls))).toBe(true);
  }, 30_000);
});

describe.skipIf(etcdBinary() === undefined)('a step after the panel started fails: the fleet id is held', () => {
  let etcd: TestEtcd;
  let holder: TestRouter;

  const fleet = () => ({
    id: 'edge-1',
    leaseTtl: '2s',
    etcd: { endpoints: [etcd.endpoint], prefix: '/teardown/fleet/', dialTimeout: '500ms' },
  });
  const book = {
    name: 'bfe',
    products: { p: { hosts: ['teardown.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
    clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } } },
  };

  beforeAll(async () => {
    etcd = await startEtcd();
    // The live router that holds `edge-1`: its member key is refreshed every leaseTtl / 3.
    holder = await startTestRouter({ addressBook: book, fleet: fleet() });
  }, 30_000);
  afterAll(async () => {
    await holder?.close();
    await etcd?.close();
  });

  /** The process's TCP handles that keep it alive, by kind (unref'd ones, as etcd clients', are not listed). */
  const tcpHandles = () =>
    process
      .getActiveResourcesInfo()
      .filter((r) => r.startsWith('TCP'))
      .sort()
      .join(',');

  /** The ids of etcd's leases (its JSON gateway): the holder's member lease, and any left behind. */
  const leases = async (): Promise<string[]> => {
    const res = await fetch(`${etcd.endpoint}/v3/lease/leases`, { method: 'POST', body: '{}' });
    const body = (await res.json()) as { leases?: { ID: string }[] };
    return (body.leases ?? []).map((l) => l.ID).sort();
  };

  it.each([
    ['net', { name: 'net' }, ['panel', 'backend states', 'admin listener', 'metrics', 'runtime']],
    [
      'worker (net, 2 threads)',
      { name: 'worker', threads: 2, engine: 'net' },
      ['panel', 'engine follower', 'backend states', 'admin listener', 'metrics', 'runtime'],
    ],
  ])(
    'the same fleet.id as a live router: every started part is closed, last first: %s',
    async (_label, panel, closed) => {
      const ports = { web: await closedPort(), api: await closedPort(), admin: await closedPort() };
      const leasesBefore = await leases();
      expect(leasesBefore).toHaveLength(1);
      // A closed server's handle leaves the list in the close phase of the loop turn after close():
      // past the check phase of this turn and the next.
      for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r));
      const before = tcpHandles();
      const lines: string[] = [];
      // Once the panel says every listener is bound, a client connects to each: the SYN is sent
      // within a tick, while the fleet has etcd round trips and at least one 200 ms poll to make.
      const clients: { connected: boolean; closed: boolean }[] = [];
      const logger = createLogger('debug', {
        write: (s: string) => {
          lines.push(s);
          if (clients.length > 0 || !/"msg":"(listening|worker threads ready)"/.test(s)) return;
          for (const port of [ports.web, ports.api]) {
            const c = { connected: false, closed: false };
            clients.push(c);
            connect(port, '127.0.0.1')
              .on('connect', () => {
                c.connected = true;
              })
              .on('error', () => undefined)
              .on('close', () => {
                c.closed = true;
              });
          }
        },
      });
      const config = {
        panel,
        log: { level: 'debug', format: 'json' },
        admin: { address: `127.0.0.1:${ports.admin}` },
        listeners: [
          { name: 'web', address: `127.0.0.1:${ports.web}` },
          { name: 'api', address: `127.0.0.1:${ports.api}` },
        ],
        addressBook: book,
        fleet: fleet(),
      };

      await expect(startTestRouter(config, { dir: await tempDir(), runtime: { logger } })).rejects.toMatchObject({
        name: 'FleetIdInUseError',
        code: 'SWB_ERR_FLEET',
        message: expect.stringContaining('fleet.id: edge-1 is in use'),
      });

      // The member lease the fleet was granted for its key is revoked before the start rejects.
      expect(await leases()).toEqual(leasesBefore);
      // Both data listeners were bound (a client connected to each), and those connections are
      // closed by the router (the panel destroyed), not by the test.
      await eventually(() => clients.every((c) => c.closed), 5_000, 'the router to close the connections');
      expect(clients).toEqual([
        { connected: true, closed: true },
        { connected: true, closed: true },
      ]);
      // Every part that started, named as it closed, last started first: not the fleet (it never
      // started), nor ACME and the reloader, which start after it.
      expect(partsLogged(lines, 'start failed: closed')).toEqual(closed);
      // Nothing keeps running: the data ports refuse connections and can be bound again, the held
      // admin port is released, and the process has the TCP handles it had before the start. (A
      // worker thread stops listening once it has ended: the panel's destroy() does not wait.)
      await eventually(
        async () => (await refused(ports.web)) && (await refused(ports.api)),
        10_000,
        'the data ports to refuse connections',
      );
      await eventually(
        async () => (await free(ports.web)) && (await free(ports.api)) && (await free(ports.admin)),
        10_000,
        'every port free',
      );
      await eventually(() => tcpHandles() === before, 10_000, `TCP handles back to ${before}`);
    },
    30_000,
  );
});
