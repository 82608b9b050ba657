/**
 * A book writer cannot spend the operator's CA budget (issue 39 item 5), against pebble: with
 * `acme.names` omitted, routing-table names outside `acme.domains` and past `acme.maxNames` get
 * no order (one log line naming them), a name already held keeps its place before new ones, and
 * past `acme.maxOrdersPerHour` the next order waits (logged) instead of reaching the CA.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

describe.skipIf(!pebbleAvailable())('acme names from the routing table, limited (pebble)', () => {
  let pebble: Pebble;
  let backend: TestBackend;
  let ports: { web: number; tls: number };

  const config = (hosts: string[], limits: Record<string, unknown>) => ({
    listeners: [
      { name: 'web', address: `127.0.0.1:${ports.web}` },
      {
        name: 'tls',
        address: `127.0.0.1:${ports.tls}`,
        tls: 'terminate',
        acme: {
          directory: pebble.directory,
          challenge: 'http-01',
          storage: 'acme',
          ca: pebble.caFile,
          domains: ['good.test'],
          ...limits,
        },
      },
    ],
    addressBook: {
      name: 'bfe',
      products: { p: { hosts, rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
  });
  const states = (r: TestRouter) => Object.fromEntries(r.router.acme.status().map((s) => [s.name, s.state] as const));

  beforeAll(async () => {
    ports = { web: await closedPort(), tls: await closedPort() };
    pebble = await startPebble({ httpPort: ports.web, tlsPort: ports.tls, validitySeconds: 3600 });
    backend = await startHttpBackend('b');
  }, 30_000);
  afterAll(async () => {
    await backend?.close();
    await pebble?.close();
  });

  it('domains, maxNames (held names first) and maxOrdersPerHour bound what is ordered', async () => {
    const dir = await tempDir();
    const first = await startTestRouter(config(['held.good.test'], {}), { dir });
    try {
      await eventually(() => states(first)['held.good.test'] === 'valid', 60_000, 'the held name issued');
    } finally {
      await first.close();
    }

    // The book grows: one name outside the registered domain, more names than maxNames.
    const lines: string[] = [];
    const { createLogger } = await import('../../src/base/log.ts');
    const orders = pebble.orders();
    const hosts = ['a1.good.test', 'a2.good.test', 'a3.good.test', 'a4.good.test', 'evil.other.test', 'held.good.test'];
    const r = await startTestRouter(config(hosts, { maxNames: 3, maxOrdersPerHour: 1 }), {
      dir,
      runtime: { logger: createLogger('info', { write: (s: string) => void lines.push(s) }) },
    });
    try {
      await eventually(() => lines.some((l) => l.includes('maxOrdersPerHour')), 60_000, 'the hourly cap reached');
      expect(states(r)).toEqual({ 'held.good.test': 'valid', 'a1.good.test': 'valid', 'a2.good.test': 'waiting' });
      // held.good.test came from storage; a1 took the hour's one order; a2 waits for the next hour.
      expect(pebble.orders()).toBe(orders + 1);
      const skipped = lines.find((l) => l.includes('get no certificate'));
      expect(skipped).toMatch(/1 not under acme\.domains.*2 past acme\.maxNames \(3\)/);
      expect(skipped).toContain('evil.other.test');
      expect(skipped).toMatch(/a3\.good\.test.*a4\.good\.test/);
      expect(lines.find((l) => l.includes('maxOrdersPerHour'))).toContain('a2.good.test');
    } finally {
      await r.close();
    }
  }, 120_000);
});
