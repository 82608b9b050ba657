/**
 * `tls: terminate` end to end (issue 8 §3): the router handshakes with a certificate chosen by
 * SNI, then routes the decrypted HTTP/1 by Host and path like plaintext; mutual TLS feeds
 * `ses_tls_client_auth` / `ses_tls_client_ca_in`; a reload swaps the certificates.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type PeerCertificate, connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { tlsRequest } from '../harness/tls-backend.ts';

const cluster = (address: string) => ({ subclusters: { s: { weight: 1, backends: [{ address }] } } });
const get = (host: string, path: string) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

/** The CN of the certificate the router presented for `servername` (undefined = no SNI). */
function servedCn(port: number, ca: string, servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      port,
      host: '127.0.0.1',
      ca,
      ...(servername === undefined ? { rejectUnauthorized: false } : { servername }),
    });
    s.on('secureConnect', () => {
      const cert: PeerCertificate = s.getPeerCertificate();
      s.destroy();
      resolve(String(cert.subject.CN));
    });
    s.on('error', reject);
  });
}

function bodyOf(data: string): Record<string, unknown> {
  const i = data.indexOf('\r\n\r\n');
  return JSON.parse(data.slice(i + 4)) as Record<string, unknown>;
}

function statusOf(data: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
}

describe('tls terminate: certificates by SNI, then HTTP routing inside', () => {
  let pki: Pki;
  let other: Pki;
  let alice: CertPair;
  let mallory: CertPair;
  const b: Record<string, TestBackend> = {};
  let router: TestRouter;
  let config: Record<string, unknown>;

  beforeAll(async () => {
    pki = await createPki();
    await pki.leaf('www', { dns: ['www.example.test'] });
    await pki.leaf('api', { dns: ['*.api.test'] });
    alice = await pki.leaf('alice', { cn: 'alice' });
    other = await pki.otherCa('other-ca', 'Other CA');
    mallory = await other.leaf('mallory', { cn: 'mallory' });
    for (const n of ['web', 'static', 'api', 'authed', 'anon']) b[n] = await startHttpBackend(n);
    config = {
      listeners: [
        {
          name: 'tls',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [
            { cert: 'www.crt', key: 'www.key' },
            { cert: 'api.crt', key: 'api.key' },
          ],
        },
        {
          name: 'mtls',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [{ cert: 'www.crt', key: 'www.key' }],
          clientAuth: { ca: 'ca.crt', required: true },
        },
        {
          name: 'mtls-optional',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [{ cert: 'www.crt', key: 'www.key' }],
          clientAuth: { ca: 'ca.crt', required: false },
        },
      ],
      addressBook: {
        name: 'bfe',
        products: {
          www: {
            hosts: ['www.example.test'],
            basicRules: [{ hosts: ['www.example.test'], paths: ['/static/*'], cluster: 'static' }],
            rules: [
              { cond: 'ses_tls_client_ca_in("Switchboard Test CA") && ses_tls_client_auth()', cluster: 'authed' },
              { cond: 'req_path_prefix_in("/anon", false) && req_proto_secure()', cluster: 'anon' },
              { cond: 'default_t()', cluster: 'web' },
            ],
          },
          api: { hosts: ['*.api.test'], rules: [{ cond: 'ses_tls_sni_in("v1.api.test")', cluster: 'api' }] },
        },
        clusters: Object.fromEntries(Object.entries(b).map(([n, x]) => [n, cluster(x.address)])),
      },
    };
    router = await startTestRouter(config, { dir: pki.dir });
  });
  afterAll(async () => {
    await router.close();
    await Promise.all(Object.values(b).map((x) => x.close()));
    await pki.close();
  });

  it.each([
    ['www.example.test', 'www.example.test'],
    ['v1.api.test', '*.api.test'],
    ['V2.API.test', '*.api.test'],
    ['unknown.test', 'www.example.test'],
  ])('SNI %s is served the certificate %s', async (sni, cn) => {
    expect(await servedCn(router.port('tls'), pki.ca.certPem, sni === 'unknown.test' ? undefined : sni)).toBe(cn);
  });

  it('without SNI the first certificate is the default', async () => {
    expect(await servedCn(router.port('tls'), pki.ca.certPem)).toBe('www.example.test');
  });

  it.each([
    ['www.example.test', 'www.example.test', '/', 'web'],
    ['www.example.test', 'www.example.test', '/static/app.js', 'static'],
    ['www.example.test', 'www.example.test', '/anon/x', 'anon'],
    ['v1.api.test', 'v1.api.test', '/users', 'api'],
  ])('SNI %s, Host %s, path %s → %s (decrypted, routed like HTTP/1)', async (sni, host, path, want) => {
    const res = await tlsRequest(router.port('tls'), { servername: sni, ca: pki.ca.certPem, send: get(host, path) });
    expect(res.error).toBeUndefined();
    expect(statusOf(res.data)).toBe(200);
    expect(bodyOf(res.data)).toMatchObject({ backend: want, url: path, host });
  });

  it('SNI condition is false for another name in the same product → no_route 404 over TLS', async () => {
    const res = await tlsRequest(router.port('tls'), {
      servername: 'v2.api.test',
      ca: pki.ca.certPem,
      send: get('v2.api.test', '/'),
    });
    expect(statusOf(res.data)).toBe(404);
    expect(res.data).toContain('X-Switchboard-Error: no_route');
  });

  it('mutual TLS required: a client certificate from the CA is accepted and routed by ses_tls_client_*', async () => {
    const res = await tlsRequest(router.port('mtls'), {
      servername: 'www.example.test',
      ca: pki.ca.certPem,
      client: alice,
      send: get('www.example.test', '/'),
    });
    expect(res.error).toBeUndefined();
    expect(bodyOf(res.data)).toMatchObject({ backend: 'authed' });
  });

  it.each([
    ['no client certificate', undefined, 'client_certificate_required'],
    ['a certificate from another CA', 'mallory', 'client_certificate_invalid'],
  ])('mutual TLS required: %s is refused before any backend, with a clean reason', async (_what, who, reason) => {
    const hits = Object.values(b).reduce((n, x) => n + x.hits, 0);
    const seen = router.access.length;
    const res = await tlsRequest(router.port('mtls'), {
      servername: 'www.example.test',
      ca: pki.ca.certPem,
      ...(who === undefined ? {} : { client: mallory }),
      send: get('www.example.test', '/'),
    });
    expect(res.data).toBe('');
    await eventually(() => router.access.slice(seen).some((r) => r.listener === 'mtls' && r.result === 'bad_request'));
    // The access log names the cause, not OpenSSL's error path (issue 19).
    const line = router.access.slice(seen).find((r) => r.listener === 'mtls' && r.result === 'bad_request');
    expect(line?.reason).toBe(reason);
    expect(Object.values(b).reduce((n, x) => n + x.hits, 0)).toBe(hits);
  });

  it('mutual TLS optional: without a certificate the client-auth rule does not match', async () => {
    const anon = await tlsRequest(router.port('mtls-optional'), {
      servername: 'www.example.test',
      ca: pki.ca.certPem,
      send: get('www.example.test', '/'),
    });
    const authed = await tlsRequest(router.port('mtls-optional'), {
      servername: 'www.example.test',
      ca: pki.ca.certPem,
      client: alice,
      send: get('www.example.test', '/'),
    });
    const foreign = await tlsRequest(router.port('mtls-optional'), {
      servername: 'www.example.test',
      ca: pki.ca.certPem,
      client: mallory,
      send: get('www.example.test', '/'),
    });
    expect(bodyOf(anon.data)).toMatchObject({ backend: 'web' });
    expect(bodyOf(authed.data)).toMatchObject({ backend: 'authed' });
    expect(bodyOf(foreign.data)).toMatchObject({ backend: 'web' });
  });

  it('a plaintext client on a terminate listener is closed without a backend', async () => {
    const hits = Object.values(b).reduce((n, x) => n + x.hits, 0);
    const { rawRequest } = await import('../harness/client.ts');
    const res = await rawRequest(router.port('tls'), get('www.example.test', '/'));
    expect(res.toString('latin1')).not.toMatch(/^HTTP\/1\.1 200/);
    expect(Object.values(b).reduce((n, x) => n + x.hits, 0)).toBe(hits);
  });

  it('a reload swaps the certificates for new connections', async () => {
    const renewed = await pki.leaf('www2', { dns: ['www.example.test'], cn: 'renewed www' });
    const listeners = (config.listeners as Record<string, unknown>[]).map((l, i) =>
      i === 0
        ? {
            ...l,
            certificates: [
              { cert: 'www2.crt', key: 'www2.key' },
              { cert: 'api.crt', key: 'api.key' },
            ],
          }
        : l,
    );
    // Same names and addresses (port 0 as first configured): the panel keeps its sockets.
    const full = { ...config, listeners, limits: { drainTimeout: '1s' } };
    await writeFile(join(pki.dir, 'switchboard.yaml'), stringify(full));
    const result = await router.router.reload();
    expect(result.errors).toEqual([]);
    expect(result.changed).toBe(true);
    expect(await servedCn(router.port('tls'), pki.ca.certPem, 'www.example.test')).toBe('renewed www');
    expect(renewed.certPem).toContain('BEGIN CERTIFICATE');
  });
});
