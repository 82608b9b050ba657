/**
 * What `startLoaded` started is closed, last started first, whatever step fails and on
 * shutdown (app/started-parts.ts, issue 41 item 4). The failing step here is the admin
 * listener on a port already taken: its port is held from before the data listeners bind
 * (app/port-hold.ts, issue 45 item 8), so the start fails before any of them binds or logs
 * `listening`, and before the ACME manager (against pebble) starts. Seen from outside: the
 * data ports stay free, the debug log names each part closed in reverse order, and nothing is
 * ordered from the CA.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/base/log.ts';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';

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
