/**
 * Certificates renewed on disk are picked up without a config change (issue 19): a rename-over
 * (certbot, cert-manager) or an in-place write of a listener's certificate files swaps the
 * certificate for new handshakes on every panel, worker threads included; an open connection
 * stays up; a bad new pair is logged and the old certificate keeps serving.
 */
import { X509Certificate } from 'node:crypto';
import { copyFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { requestOnSocket } from '../harness/client.ts';
import { eventually, startLiveCertRouter, tempDir } from '../harness/router.ts';

const NAME = 'www.example.test';

/** A verified handshake; `sni: false` sends no server name (the listener's default certificate). */
function handshake(port: number, ca: string, sni = true): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const names = sni ? { servername: NAME } : { checkServerIdentity: () => undefined };
    const s = connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['http/1.1'], ...names }, () => resolve(s));
    s.once('error', reject);
  });
}

const fp = (pem: string) => new X509Certificate(pem).fingerprint256;

/** The fingerprint a new handshake gets. */
async function served(port: number, ca: string, sni = true): Promise<string> {
  const s = await handshake(port, ca, sni);
  const f = s.getPeerX509Certificate()!.fingerprint256;
  s.destroy();
  return f;
}

/** True when `n` new handshakes in a row (spread over worker threads) all get `want`. */
async function allServe(port: number, ca: string, want: string, n = 4): Promise<boolean> {
  for (let i = 0; i < n; i++) if ((await served(port, ca, i % 2 === 0)) !== want) return false;
  return true;
}

describe.each([
  ['net', { name: 'net' }],
  ['http2', { name: 'http2' }],
  ['worker (net, 2 threads)', { name: 'worker', threads: 2, engine: 'net' }],
])('certificate files watched: %s', (_label, panel) => {
  let pki: Pki;
  let v1: CertPair;
  let v2: CertPair;
  let backend: TestBackend;

  beforeAll(async () => {
    pki = await createPki();
    v1 = await pki.leaf('v1', { dns: [NAME] });
    v2 = await pki.leaf('v2', { dns: [NAME] });
    backend = await startHttpBackend('b');
  });
  afterAll(async () => {
    await backend.close();
    await pki.close();
  });

  it('a rename-over and an in-place write swap the certificate; open connections stay; a bad pair is refused', async () => {
    const dir = await tempDir();
    await copyFile(v1.cert, join(dir, 'live.crt'));
    await copyFile(v1.key, join(dir, 'live.key'));
    const { router: r, lines } = await startLiveCertRouter(panel, dir, NAME, backend.address);
    try {
      const port = r.port('tls');
      const ca = pki.ca.certPem;
      expect(await allServe(port, ca, fp(v1.certPem))).toBe(true);
      const open = await handshake(port, ca);
      expect(await requestOnSocket(open, NAME)).toBe('HTTP/1.1 200 OK');

      // certbot / cert-manager style: new files written aside, then renamed over the old ones.
      await copyFile(v2.cert, join(dir, 'new.crt'));
      await copyFile(v2.key, join(dir, 'new.key'));
      await rename(join(dir, 'new.key'), join(dir, 'live.key'));
      await rename(join(dir, 'new.crt'), join(dir, 'live.crt'));
      // Each worker thread polls the files on its own clock, and SO_REUSEPORT spreads handshakes
      // by hash: 16 in a row make "every thread has swapped" near certain (4 could all reach the
      // thread that swapped first, and the bad-pair step below then met the other one's v1).
      await eventually(() => allServe(port, ca, fp(v2.certPem), 16), 15_000, 'the renamed-over certificate served');
      expect(open.destroyed).toBe(false);
      expect(await requestOnSocket(open, NAME)).toBe('HTTP/1.1 200 OK');

      // In place, a key that does not match the certificate: logged, the previous one keeps serving.
      await writeFile(join(dir, 'live.crt'), await readFile(v1.cert));
      await eventually(() => lines.some((l) => l.includes('new pair is not usable')), 15_000, 'bad pair logged');
      expect(await allServe(port, ca, fp(v2.certPem))).toBe(true);

      // The key written in place completes the pair.
      await writeFile(join(dir, 'live.key'), await readFile(v1.key));
      await eventually(() => allServe(port, ca, fp(v1.certPem)), 15_000, 'the in-place pair served');
      expect(await requestOnSocket(open, NAME)).toBe('HTTP/1.1 200 OK');
      open.destroy();
    } finally {
      await r.close();
    }
  }, 60_000);
});
