/**
 * The router answers ACME challenges itself, in the core pipeline, on every panel (issue 21):
 * HTTP-01 tokens on plaintext listeners before routing (net per-connection and per-request,
 * the http2 panel's HTTP/1 path), TLS-ALPN-01 handshakes offering `acme-tls/1` for a pending
 * name get the RFC 8737 challenge certificate and are never routed; everything else is routed
 * as before.
 */
import { connect, type TLSSocket } from 'node:tls';
import * as acme from 'acme-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const NAME = 'www.example.test';
const PENDING = 'pending.example.test';
const TOKEN = 'tok-123_abc';
const KEY_AUTH = `${TOKEN}.thumbprint-xyz`;

function tlsConnect(port: number, servername: string, alpn: string[]): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername, ALPNProtocols: alpn, rejectUnauthorized: false }, () =>
      resolve(s),
    );
    s.once('error', reject);
  });
}

describe.each([
  ['net per-connection', { name: 'net' }, 'per-connection'],
  ['net per-request', { name: 'net' }, 'per-request'],
  ['http2', { name: 'http2' }, 'per-request'],
])('acme challenges answered by the router: %s', (_label, panel, routing) => {
  let pki: Pki;
  let www: CertPair;
  let backend: TestBackend;
  let r: TestRouter;

  beforeAll(async () => {
    pki = await createPki();
    www = await pki.leaf('www', { dns: [NAME] });
    backend = await startHttpBackend('b');
    r = await startTestRouter(
      {
        panel,
        routing,
        listeners: [
          { name: 'web', address: '127.0.0.1:0' },
          {
            name: 'tls',
            address: '127.0.0.1:0',
            tls: 'terminate',
            certificates: [{ cert: www.cert, key: www.key }],
            acme: { directory: 'https://127.0.0.1:9/dir', names: [], storage: 'acme' },
          },
        ],
        addressBook: {
          name: 'bfe',
          products: { p: { hosts: [NAME, PENDING], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
          clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
        },
      },
      {},
    );
  });
  afterAll(async () => {
    await r.close();
    await backend.close();
    await pki.close();
  });

  it('http-01: a pending token is answered before routing; others are routed', async () => {
    r.router.runtime.issued.apply({ kind: 'http-challenge', token: TOKEN, keyAuthorization: KEY_AUTH });
    const hits = backend.hits;
    const got = await rawRequest(
      r.port('web'),
      `GET /.well-known/acme-challenge/${TOKEN} HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`,
    );
    expect(statusOf(got)).toBe(200);
    expect(got.toString('latin1').endsWith(`\r\n\r\n${KEY_AUTH}`)).toBe(true);
    expect(backend.hits).toBe(hits);
    const other = await rawRequest(
      r.port('web'),
      `GET /.well-known/acme-challenge/other HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`,
    );
    expect(statusOf(other)).toBe(200);
    expect(backend.hits).toBe(hits + 1);
    r.router.runtime.issued.apply({ kind: 'http-challenge-done', token: TOKEN });
    await rawRequest(
      r.port('web'),
      `GET /.well-known/acme-challenge/${TOKEN} HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`,
    );
    expect(backend.hits).toBe(hits + 2);
  });

  it('tls-alpn-01: acme-tls/1 for a pending name gets the challenge certificate and is never routed', async () => {
    const authz = { identifier: { type: 'dns', value: PENDING } } as acme.Authorization;
    const [key, cert] = await acme.crypto.createAlpnCertificate(authz, KEY_AUTH);
    r.router.runtime.issued.apply({
      kind: 'tls-challenge',
      listener: 'tls',
      name: PENDING,
      cert: cert.toString(),
      key: key.toString(),
    });
    const s = await tlsConnect(r.port('tls'), PENDING, ['acme-tls/1']);
    expect(s.alpnProtocol).toBe('acme-tls/1');
    const peer = s.getPeerX509Certificate()!;
    expect(acme.crypto.isAlpnCertificateAuthorizationValid(peer.toString(), KEY_AUTH)).toBe(true);
    await new Promise((resolve) => s.once('close', resolve));
    await eventually(
      () => r.access.some((a) => a.result === 'acme_challenge' && a.listener === 'tls'),
      10_000,
      'the validation logged',
    );

    // The same name without acme-tls/1, and acme-tls/1 for a name not pending: the usual handshake.
    const normal = await tlsConnect(r.port('tls'), PENDING, ['http/1.1']);
    expect(normal.getPeerX509Certificate()!.subjectAltName).toBe(`DNS:${NAME}`);
    normal.destroy();
    const notPending = await tlsConnect(r.port('tls'), NAME, ['acme-tls/1', 'http/1.1']);
    expect(notPending.alpnProtocol).toBe('http/1.1');
    expect(notPending.getPeerX509Certificate()!.subjectAltName).toBe(`DNS:${NAME}`);
    notPending.destroy();
    r.router.runtime.issued.apply({ kind: 'tls-challenge-done', listener: 'tls', name: PENDING });
  });
});
