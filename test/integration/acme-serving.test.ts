/**
 * How ACME certificates are served beside file certificates (issue 21): by exact SNI after the
 * files (files win for the names they cover), kept across a config reload (they belong to the
 * runtime, not to an engine), swapped in place for new handshakes; a listener with only an
 * `acme:` section fails the handshake for a name it has no certificate for yet; a name dropped
 * from the config is withdrawn on every thread (not served until a restart).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';

/** The SAN of the certificate a handshake for `servername` gets, or the handshake error. */
function sanFor(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, servername, ca, checkServerIdentity: () => undefined }, () => {
      resolve(s.getPeerX509Certificate()?.subjectAltName ?? '');
      s.destroy();
    });
    s.once('error', (e) => resolve(`error: ${e.message}`));
  });
}

describe('acme certificates beside file certificates', () => {
  let pki: Pki;
  let file: CertPair;
  let issued: CertPair;
  let issued2: CertPair;
  let covered: CertPair;
  let backend: TestBackend;

  beforeAll(async () => {
    pki = await createPki();
    file = await pki.leaf('file', { dns: ['*.files.test'] });
    issued = await pki.leaf('issued', { dns: ['acme.example.test'] });
    issued2 = await pki.leaf('issued2', { dns: ['acme.example.test'] });
    covered = await pki.leaf('covered', { dns: ['www.files.test'] });
    backend = await startHttpBackend('b');
  });
  afterAll(async () => {
    await backend.close();
    await pki.close();
  });

  const config = (listeners: unknown[], extra: Record<string, unknown> = {}) => ({
    listeners,
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: ['acme.example.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
    ...extra,
  });
  const acmeSection = { directory: 'https://127.0.0.1:9/dir', names: [], storage: 'acme' };

  it('served by SNI after the files, kept across a reload, swapped in place', async () => {
    const listeners = [
      {
        name: 'tls',
        address: '127.0.0.1:0',
        tls: 'terminate',
        certificates: [{ cert: file.cert, key: file.key }],
        acme: acmeSection,
      },
    ];
    const r = await startTestRouter(config(listeners));
    try {
      const port = r.port('tls');
      const ca = pki.ca.certPem;
      const { issued: set } = r.router.runtime;
      set.apply({
        kind: 'certificate',
        listener: 'tls',
        name: 'acme.example.test',
        cert: issued.certPem,
        key: issued.keyPem,
      });
      // An ACME certificate for a name the files cover never wins.
      set.apply({
        kind: 'certificate',
        listener: 'tls',
        name: 'www.files.test',
        cert: covered.certPem,
        key: covered.keyPem,
      });
      expect(await sanFor(port, 'acme.example.test', ca)).toBe('DNS:acme.example.test');
      expect(await sanFor(port, 'www.files.test', ca)).toBe('DNS:*.files.test');
      expect(await sanFor(port, 'other.test', ca)).toBe('DNS:*.files.test');

      // A reload builds a new engine; the runtime's ACME certificates stay.
      const text = stringify({ ...config(listeners, { limits: { drainTimeout: '2s' } }) });
      await writeFile(join(r.dir, 'switchboard.yaml'), text);
      const result = await r.router.reload();
      expect(result.ok && result.changed).toBe(true);
      expect(await sanFor(port, 'acme.example.test', ca)).toBe('DNS:acme.example.test');

      // A renewal replaces the entry: new handshakes get the new certificate.
      const before = await fingerprint(port, ca);
      set.apply({
        kind: 'certificate',
        listener: 'tls',
        name: 'acme.example.test',
        cert: issued2.certPem,
        key: issued2.keyPem,
      });
      expect(await fingerprint(port, ca)).not.toBe(before);
    } finally {
      await r.close();
    }
  });

  it('an acme-only listener: a name without a certificate fails the handshake, logged once', async () => {
    const lines: string[] = [];
    const { createLogger } = await import('../../src/base/log.ts');
    const r = await startTestRouter(
      config([{ name: 'tls', address: '127.0.0.1:0', tls: 'terminate', acme: acmeSection }]),
      { runtime: { logger: createLogger('warn', { write: (s: string) => void lines.push(s) }) } },
    );
    try {
      const port = r.port('tls');
      expect(await sanFor(port, 'acme.example.test', pki.ca.certPem)).toMatch(/^error: /);
      expect(await sanFor(port, 'acme.example.test', pki.ca.certPem)).toMatch(/^error: /);
      expect(lines.filter((l) => l.includes('no certificate for this name yet'))).toHaveLength(1);
      r.router.runtime.issued.apply({
        kind: 'certificate',
        listener: 'tls',
        name: 'acme.example.test',
        cert: issued.certPem,
        key: issued.keyPem,
      });
      expect(await sanFor(port, 'acme.example.test', pki.ca.certPem)).toBe('DNS:acme.example.test');
    } finally {
      await r.close();
    }
  });
});

describe.each([
  ['net', { name: 'net' }],
  ['http2', { name: 'http2' }],
  ['worker (net, 2 threads)', { name: 'worker', threads: 2, engine: 'net' }],
])('a name dropped from acme.names stops being served: %s', (_label, panel) => {
  let pki: Pki;
  let file: CertPair;
  let issued: CertPair;
  let backend: TestBackend;

  beforeAll(async () => {
    pki = await createPki();
    file = await pki.leaf('file', { dns: ['*.files.test'] });
    issued = await pki.leaf('issued', { dns: ['acme.example.test'] });
    backend = await startHttpBackend('b');
  });
  afterAll(async () => {
    await backend.close();
    await pki.close();
  });

  it('withdrawn on the reload that drops it, served from storage again when it comes back', async () => {
    // A stored, unexpired certificate is served at start without asking the (unreachable) CA.
    const dir = await tempDir();
    await mkdir(join(dir, 'acme', 'certs'), { recursive: true });
    await writeFile(join(dir, 'acme', 'certs', 'acme.example.test.crt'), issued.certPem);
    await writeFile(join(dir, 'acme', 'certs', 'acme.example.test.key'), issued.keyPem);
    const config = (names: string[]) => ({
      panel,
      limits: { drainTimeout: '1s' },
      listeners: [
        {
          name: 'tls',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [{ cert: file.cert, key: file.key }],
          acme: { directory: 'https://127.0.0.1:9/dir', names, storage: 'acme' },
        },
      ],
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['acme.example.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
      },
    });
    const r = await startTestRouter(config(['acme.example.test']), { dir });
    try {
      const port = r.port('tls');
      const ca = pki.ca.certPem;
      const san = () => sanFor(port, 'acme.example.test', ca);
      await eventually(async () => (await san()) === 'DNS:acme.example.test', 10_000, 'the stored certificate');

      await writeFile(join(dir, 'switchboard.yaml'), stringify(config([])));
      const dropped = await r.router.reload();
      expect(dropped.ok && dropped.changed).toBe(true);
      // The worker threads apply the withdrawal asynchronously; every new handshake then gets the file's.
      await eventually(async () => (await san()) === 'DNS:*.files.test', 10_000, 'the withdrawal');
      for (let i = 0; i < 4; i++) expect(await san()).toBe('DNS:*.files.test');
      expect(r.router.runtime.issued.certificate('tls', 'acme.example.test')).toBeUndefined();

      await writeFile(join(dir, 'switchboard.yaml'), stringify(config(['acme.example.test'])));
      const back = await r.router.reload();
      expect(back.ok && back.changed).toBe(true);
      await eventually(async () => (await san()) === 'DNS:acme.example.test', 10_000, 'the certificate again');
    } finally {
      await r.close();
    }
  });
});

function fingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername: 'acme.example.test', ca }, () => {
      resolve(s.getPeerX509Certificate()!.fingerprint256);
      s.destroy();
    });
    s.once('error', reject);
  });
}
