/**
 * ACME against Debian's pebble with real validation (issue 21): a fresh router obtains a
 * certificate for one name by TLS-ALPN-01 and another by HTTP-01, both verify against pebble's
 * root; a restart serves them from storage without a new order; a renewal window that comes
 * due while a client connection is open renews without dropping it.
 */
import { X509Certificate } from 'node:crypto';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { requestOnSocket } from '../harness/client.ts';
import { type Pebble, pebbleAvailable, startPebble } from '../harness/pebble.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const ALPN_NAME = 'alpn.acme.test';
const HTTP_NAME = 'http.acme.test';

/** A verified handshake for `servername`; resolves with the open socket. */
function handshake(port: number, servername: string, ca: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername, ca, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
    s.once('error', reject);
  });
}

function fingerprint(s: TLSSocket): string {
  return new X509Certificate(s.getPeerX509Certificate()!.raw).fingerprint256;
}

describe.skipIf(!pebbleAvailable())('acme against pebble', () => {
  let pebble: Pebble;
  let backend: TestBackend;
  let dir: string;
  let ports: { web: number; alpn: number; http: number };

  const config = (renewBefore: string, panel: Record<string, unknown> = { name: 'net' }) => ({
    panel,
    admin: { address: '127.0.0.1:0', open: ['/healthz', '/certificates', '/metrics'] },
    listeners: [
      { name: 'web', address: `127.0.0.1:${ports.web}` },
      {
        name: 'alpn',
        address: `127.0.0.1:${ports.alpn}`,
        tls: 'terminate',
        acme: {
          directory: pebble.directory,
          email: 'ops@example.com',
          names: [ALPN_NAME],
          challenge: 'tls-alpn-01',
          storage: 'acme-alpn',
          renewBefore,
          ca: pebble.caFile,
        },
      },
      {
        name: 'https2',
        address: `127.0.0.1:${ports.http}`,
        tls: 'terminate',
        acme: {
          directory: pebble.directory,
          challenge: 'http-01',
          names: [HTTP_NAME],
          storage: 'acme-http',
          renewBefore,
          ca: pebble.caFile,
        },
      },
    ],
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: [ALPN_NAME, HTTP_NAME], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
  });

  const allValid = (r: TestRouter) => () =>
    r.router.acme.status().length === 2 && r.router.acme.status().every((s) => s.state === 'valid');

  beforeAll(async () => {
    ports = { web: await closedPort(), alpn: await closedPort(), http: await closedPort() };
    pebble = await startPebble({ httpPort: ports.web, tlsPort: ports.alpn, validitySeconds: 3600 });
    backend = await startHttpBackend('b');
    dir = await tempDir();
  }, 30_000);
  afterAll(async () => {
    await backend?.close();
    await pebble?.close();
  });

  let served: Record<string, string> = {};

  it.each([
    ['net', { name: 'net' }],
    ['http2', { name: 'http2' }],
    ['worker (net, 2 threads)', { name: 'worker', threads: 2, engine: 'net' }],
  ])(
    'a fresh router obtains a certificate by tls-alpn-01 and one by http-01: %s',
    async (label, panel) => {
      const own = label === 'net' ? dir : await tempDir();
      const hitsBefore = backend.hits;
      const r = await startTestRouter(config('1m', panel), { dir: own });
      try {
        await eventually(allValid(r), 60_000, 'both certificates issued');
        expect(r.router.acme.results).toEqual({ ok: 2, failed: 0 });
        const root = await pebble.root();
        const a = await handshake(ports.alpn, ALPN_NAME, root);
        const h = await handshake(ports.http, HTTP_NAME, root);
        expect(a.authorized && h.authorized).toBe(true);
        expect(a.getPeerX509Certificate()?.subjectAltName).toBe(`DNS:${ALPN_NAME}`);
        expect(h.getPeerX509Certificate()?.subjectAltName).toBe(`DNS:${HTTP_NAME}`);
        if (label === 'net') served = { alpn: fingerprint(a), http: fingerprint(h) };
        expect(await requestOnSocket(a, ALPN_NAME)).toBe('HTTP/1.1 200 OK');
        a.destroy();
        h.destroy();
        // The router itself answered both validations; none reached the backend.
        await eventually(() => r.access.filter((x) => x.result === 'acme_challenge').length >= 2, 10_000, 'access');
        const answered = r.access.filter((x) => x.result === 'acme_challenge');
        expect(answered.some((x) => x.listener === 'alpn')).toBe(true);
        expect(answered.some((x) => x.listener === 'web')).toBe(true);
        expect(backend.hits).toBe(hitsBefore + 1);

        // Admin GET /certificates and the metrics show both names.
        const admin = `http://127.0.0.1:${r.router.admin!.address().port}`;
        const report = (await (await fetch(`${admin}/certificates`)).json()) as {
          certificates: { listener: string; source: string; names: string[] }[];
          acme: { name: string; state: string }[];
        };
        expect(report.acme.map((a) => [a.name, a.state]).sort()).toEqual([
          [ALPN_NAME, 'valid'],
          [HTTP_NAME, 'valid'],
        ]);
        expect(
          report.certificates
            .filter((c) => c.source === 'acme')
            .flatMap((c) => c.names)
            .sort(),
        ).toEqual([ALPN_NAME, HTTP_NAME]);
        const metrics = await (await fetch(`${admin}/metrics`)).text();
        expect(metrics).toMatch(
          new RegExp(
            `switchboard_certificate_expiry_seconds\\{listener="alpn",name="${ALPN_NAME}",source="acme"\\} \\d+`,
          ),
        );
        expect(metrics).toMatch(/switchboard_acme_issuance_total\{result="ok"\} 2/);
      } finally {
        await r.close();
      }
    },
    90_000,
  );

  it('a restart serves from storage, and a due renewal keeps open connections', async () => {
    // Renewal comes due a few seconds after the start: first the stored certificates are served.
    const notAfter = Date.parse(new X509Certificate(await readStored(dir)).validTo);
    const renewBefore = `${Math.max(1, notAfter - Date.now() - 6_000)}ms`;
    const r = await startTestRouter(config(renewBefore), { dir });
    try {
      await eventually(allValid(r), 10_000, 'stored certificates loaded');
      expect(r.router.acme.results).toEqual({ ok: 0, failed: 0 });
      const root = await pebble.root();
      const open = await handshake(ports.alpn, ALPN_NAME, root);
      expect(fingerprint(open)).toBe(served.alpn);
      expect(await requestOnSocket(open, ALPN_NAME)).toBe('HTTP/1.1 200 OK');

      await eventually(() => r.router.acme.results.ok === 2, 60_000, 'both certificates renewed');
      expect(r.router.acme.results.failed).toBe(0);
      const fresh = await handshake(ports.alpn, ALPN_NAME, root);
      expect(fingerprint(fresh)).not.toBe(served.alpn);
      fresh.destroy();
      const fresh2 = await handshake(ports.http, HTTP_NAME, root);
      expect(fingerprint(fresh2)).not.toBe(served.http);
      fresh2.destroy();
      // The connection opened before the renewal is still up and still served.
      expect(open.destroyed).toBe(false);
      expect(await requestOnSocket(open, ALPN_NAME)).toBe('HTTP/1.1 200 OK');
      open.destroy();
    } finally {
      await r.close();
    }
  }, 90_000);
});

async function readStored(dir: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return readFile(`${dir}/acme-alpn/certs/${ALPN_NAME}.crt`, 'utf8');
}
