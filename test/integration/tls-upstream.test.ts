/**
 * Upstream TLS (cluster `tls: { sni, ca, verify }`, issue 8 §3): plaintext HTTP and terminated
 * TLS are re-encrypted to HTTPS backends, with the backend certificate verified by default;
 * TLS passthrough traffic is never wrapped a second time.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channels } from '../../src/base/diagnostics.ts';
import type { TestBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import { rawRequest } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { startHttpsBackend, tlsRequest } from '../harness/tls-backend.ts';

const get = (host: string, path = '/') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

function parse(data: string): { status: number; body: Record<string, unknown> | undefined; head: string } {
  const i = data.indexOf('\r\n\r\n');
  const head = data.slice(0, i);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
  const text = data.slice(i + 4);
  return { status, head, body: status === 200 ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

describe('upstream TLS: re-encryption with verification', () => {
  let pki: Pki;
  let backend: TestBackend;
  let router: TestRouter;
  const connectErrors: string[] = [];
  const onConnect = (m: unknown) => {
    const { error } = m as { error?: string };
    if (error !== undefined) connectErrors.push(error);
  };

  beforeAll(async () => {
    subscribe(channels.upstreamConnect.name, onConnect);
    pki = await createPki();
    const cert = await pki.leaf('backend', { dns: ['backend.test'], ip: ['127.0.0.1'] });
    await pki.leaf('front', { dns: ['front.test', 'verified.test'] });
    backend = await startHttpsBackend('secure', cert);
    const c = (tls: Record<string, unknown>) => ({
      retries: 0,
      tls,
      subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } },
    });
    const product = (host: string, cluster: string) => ({ hosts: [host], rules: [{ cond: 'default_t()', cluster }] });
    router = await startTestRouter(
      {
        listeners: [
          { name: 'plain', address: '127.0.0.1:0' },
          {
            name: 'tls',
            address: '127.0.0.1:0',
            tls: 'terminate',
            certificates: [{ cert: 'front.crt', key: 'front.key' }],
          },
        ],
        addressBook: {
          name: 'bfe',
          products: {
            verified: product('verified.test', 'verified'),
            wrongname: product('wrongname.test', 'wrongname'),
            noverify: product('noverify.test', 'noverify'),
            untrusted: product('untrusted.test', 'untrusted'),
            ip: product('ip.test', 'ip'),
          },
          clusters: {
            verified: c({ sni: 'backend.test', ca: 'ca.crt' }),
            wrongname: c({ sni: 'other.test', ca: 'ca.crt' }),
            noverify: c({ sni: 'other.test', ca: 'ca.crt', verify: false }),
            untrusted: c({ sni: 'backend.test' }),
            ip: c({ ca: 'ca.crt' }),
          },
        },
      },
      { dir: pki.dir },
    );
  });
  afterAll(async () => {
    unsubscribe(channels.upstreamConnect.name, onConnect);
    await router.close();
    await backend.close();
    await pki.close();
  });

  it('plaintext HTTP → HTTPS backend, SNI from the cluster, certificate verified against the cluster CA', async () => {
    const res = parse((await rawRequest(router.port('plain'), get('verified.test', '/a'))).toString('latin1'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ backend: 'secure', sni: 'backend.test', url: '/a', host: 'verified.test' });
  });

  it('terminated TLS is re-encrypted to the backend', async () => {
    const res = await tlsRequest(router.port('tls'), {
      servername: 'verified.test',
      ca: pki.ca.certPem,
      send: get('verified.test', '/b'),
    });
    expect(parse(res.data).body).toMatchObject({ backend: 'secure', sni: 'backend.test', url: '/b' });
  });

  it('an IP backend without sni: no SNI sent, the IP SAN is verified', async () => {
    const res = parse((await rawRequest(router.port('plain'), get('ip.test'))).toString('latin1'));
    expect(res.body).toMatchObject({ backend: 'secure', sni: null });
  });

  it.each([
    ['wrongname.test', 'the certificate does not carry the sni name'],
    ['untrusted.test', 'the CA is not in the system roots'],
  ])('%s: verification fails (%s) → 502 connect_failed, error reported', async (host) => {
    connectErrors.length = 0;
    const res = parse((await rawRequest(router.port('plain'), get(host))).toString('latin1'));
    expect(res.status).toBe(502);
    expect(res.head).toContain('X-Switchboard-Error: connect_failed');
    await eventually(() => connectErrors.some((e) => /tls: /.test(e)), 10_000, 'a tls connect error');
  });

  it('verify: false accepts the wrong name', async () => {
    const res = parse((await rawRequest(router.port('plain'), get('noverify.test'))).toString('latin1'));
    expect(res.body).toMatchObject({ backend: 'secure', sni: 'other.test' });
  });

  it('TLS passthrough to a tls: cluster is not wrapped again (the client handshakes with the backend)', async () => {
    const res = await tlsRequest(router.port('plain'), {
      servername: 'verified.test',
      send: get('verified.test', '/c'),
    });
    expect(res.error).toBeUndefined();
    // The backend saw the client's own SNI, not the cluster's `sni`.
    expect(parse(res.data).body).toMatchObject({ backend: 'secure', sni: 'verified.test', url: '/c' });
  });
});
