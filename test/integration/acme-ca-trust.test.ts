/**
 * `acme.ca` is its section's trust only (issue 39 item 11), against pebble (whose own HTTPS is
 * signed by a private CA): a section without `ca:` does not trust another section's CA, and a
 * reload that removes `ca:` stops trusting it for that section's next order.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as acmeClient from 'acme-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const UNTRUSTED = /self[- ]signed|unable to (verify|get local issuer)|certificate/i;

describe.skipIf(!pebbleAvailable())('acme.ca per section (pebble)', () => {
  let pebble: Pebble;
  let backend: TestBackend;
  let ports: { web: number; a: number; b: number };

  const acme = (names: string[], storage: string, ca: boolean) => ({
    directory: pebble.directory,
    names,
    challenge: 'http-01',
    storage,
    // pebble's certificates last an hour: under the default renewBefore (30 days) the state a reload
    // rebuilds would renew at once, and the check below would race that renewal.
    renewBefore: '10m',
    ...(ca ? { ca: pebble.caFile } : {}),
  });
  const config = (a: Record<string, unknown>, b: Record<string, unknown>) => ({
    listeners: [
      { name: 'web', address: `127.0.0.1:${ports.web}` },
      { name: 'a', address: `127.0.0.1:${ports.a}`, tls: 'terminate', acme: a },
      { name: 'b', address: `127.0.0.1:${ports.b}`, tls: 'terminate', acme: b },
    ],
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: ['one.trust.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
  });
  const state = (r: TestRouter, name: string) => r.router.acme.status().find((s) => s.name === name);

  beforeAll(async () => {
    // acme-client retries a request without an answer 5 times over 75 s (its process-wide setting): once here.
    (
      acmeClient.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }
    ).acmeSettings.retryMaxAttempts = 0;
    ports = { web: await closedPort(), a: await closedPort(), b: await closedPort() };
    pebble = await startPebble({ httpPort: ports.web, tlsPort: ports.a, validitySeconds: 3600 });
    backend = await startHttpBackend('b');
  }, 30_000);
  afterAll(async () => {
    await backend?.close();
    await pebble?.close();
  });

  it('a section without ca: does not trust another section’s; a reload that removes ca: stops trusting it', async () => {
    const orders = pebble.orders();
    const r = await startTestRouter(
      config(acme(['one.trust.test'], 'acme-a', true), acme(['two.trust.test'], 'acme-b', false)),
    );
    try {
      await eventually(() => state(r, 'one.trust.test')?.state === 'valid', 60_000, 'one issued (ca: set)');
      await eventually(() => state(r, 'two.trust.test')?.state === 'failed', 60_000, 'two refused (no ca:)');
      expect(state(r, 'two.trust.test')?.lastError).toMatch(UNTRUSTED);
      expect(pebble.orders()).toBe(orders + 1);

      // Reload: section a loses its ca: and gains a name. The stored certificate still serves; the new order fails.
      const next = config(
        acme(['one.trust.test', 'three.trust.test'], 'acme-a', false),
        acme(['two.trust.test'], 'acme-b', false),
      );
      await writeFile(join(r.dir, 'switchboard.yaml'), stringify({ ...next, limits: { drainTimeout: '1s' } }));
      const result = await r.router.reload();
      expect(result.ok && result.changed).toBe(true);
      await eventually(() => state(r, 'three.trust.test')?.state === 'failed', 60_000, 'three refused after reload');
      expect(state(r, 'three.trust.test')?.lastError).toMatch(UNTRUSTED);
      expect(state(r, 'one.trust.test')?.state).toBe('valid');
      expect(pebble.orders()).toBe(orders + 1);
    } finally {
      await r.close();
    }
  }, 120_000);
});
