/**
 * ACME under storage failure (issue 39 item 4), against pebble: a CA is never asked for a
 * certificate the router could not keep. Storage that cannot be written (`certs` a regular file)
 * places no order and is probed again with backoff; once fixed, exactly one order and the
 * certificate is served. A save that fails after issuance serves the certificate from memory
 * and stores it later without a second order.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';

/** The SAN a verified handshake for `servername` gets, or the handshake error. */
function sanFor(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, servername, ca }, () => {
      resolve(s.getPeerX509Certificate()?.subjectAltName ?? '');
      s.destroy();
    });
    s.once('error', (e) => resolve(`error: ${e.message}`));
  });
}

describe.skipIf(!pebbleAvailable())('acme storage failures (pebble)', () => {
  let pebble: Pebble;
  let backend: TestBackend;
  let ports: { web: number; tls: number };
  const failures: { op: string }[] = [];
  const onStorage = (m: unknown) => void failures.push(m as { op: string });

  const config = (name: string) => ({
    listeners: [
      { name: 'web', address: `127.0.0.1:${ports.web}` },
      {
        name: 'tls',
        address: `127.0.0.1:${ports.tls}`,
        tls: 'terminate',
        acme: { directory: pebble.directory, names: [name], challenge: 'http-01', storage: 'acme', ca: pebble.caFile },
      },
    ],
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: [name], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
  });

  beforeAll(async () => {
    ports = { web: await closedPort(), tls: await closedPort() };
    pebble = await startPebble({ httpPort: ports.web, tlsPort: ports.tls, validitySeconds: 3600 });
    backend = await startHttpBackend('b');
    subscribe('switchboard:acme:storage', onStorage);
  }, 30_000);
  afterAll(async () => {
    unsubscribe('switchboard:acme:storage', onStorage);
    await backend?.close();
    await pebble?.close();
  });

  it('storage not writable: no order until it is, then exactly one, served', async () => {
    const name = 'broken.storage.test';
    const dir = await tempDir();
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'certs'), 'a file where a directory belongs');
    const orders = pebble.orders();
    const probes = () => failures.filter((f) => f.op === 'probe').length;
    const before = probes();
    const r = await startTestRouter(config(name), { dir });
    try {
      // Probed again with backoff (1 s, 2 s…), the CA never called meanwhile.
      await eventually(() => probes() >= before + 2, 20_000, 'two failed storage probes');
      const [status] = r.router.acme.status();
      expect(status?.state).toBe('waiting');
      expect(status?.lastError).toMatch(/acme storage: .*certs/);
      expect(pebble.orders()).toBe(orders);

      await rm(join(dir, 'acme', 'certs'));
      await eventually(() => r.router.acme.status()[0]?.state === 'valid', 60_000, 'certificate after the fix');
      expect(pebble.orders()).toBe(orders + 1);
      expect(await sanFor(ports.tls, name, await pebble.root())).toBe(`DNS:${name}`);
      expect(await readFile(join(dir, 'acme', 'certs', `${name}.crt`), 'utf8')).toContain('BEGIN CERTIFICATE');
    } finally {
      await r.close();
    }
  }, 90_000);

  it('a save that fails after issuance: served from memory, stored later, never ordered twice', async () => {
    const name = 'unsaved.storage.test';
    const dir = await tempDir();
    // The probe passes (certs is a writable directory), but the key cannot be renamed into place.
    await mkdir(join(dir, 'acme', 'certs', `${name}.key`), { recursive: true });
    const [orders, issued] = [pebble.orders(), pebble.issued()];
    const saves = () => failures.filter((f) => f.op === 'save').length;
    const before = saves();
    const r = await startTestRouter(config(name), { dir });
    try {
      await eventually(() => r.router.acme.status()[0]?.state === 'valid', 60_000, 'certificate issued');
      expect(r.router.acme.status()[0]?.stored).toBe(false);
      expect(saves()).toBeGreaterThan(before);
      expect(await sanFor(ports.tls, name, await pebble.root())).toBe(`DNS:${name}`);

      await rm(join(dir, 'acme', 'certs', `${name}.key`), { recursive: true });
      await eventually(() => r.router.acme.status()[0]?.stored === true, 30_000, 'certificate stored later');
      expect(await readFile(join(dir, 'acme', 'certs', `${name}.key`), 'utf8')).toContain('PRIVATE KEY');
      expect(r.router.acme.results).toEqual({ ok: 1, failed: 0 });
      expect([pebble.orders(), pebble.issued()]).toEqual([orders + 1, issued + 1]);
    } finally {
      await r.close();
    }
  }, 90_000);
});
