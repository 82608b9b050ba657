/**
 * TLS on access lines (issue 45 item 7): `secure`, `sni`, `alpn` and `tls_version` on the lines
 * of terminating listeners (net per-request: each request's line and the connection's;
 * per-connection; the http2 panel's stream lines; the worker panel's threads, whose lines the
 * main thread writes) and of passthrough listeners (the ClientHello's SNI, offered ALPN and
 * highest offered version); a plain line has none of them. Real TLS clients, the real router.
 */
import { connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessRecord } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import { httpGet } from '../harness/http.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';
import { startTlsBackend, tlsRequest } from '../harness/tls-backend.ts';
import { h2Request } from './http2-helpers.ts';

const HOST = 'www.example.test';
const TWO_REQUESTS =
  `GET /one HTTP/1.1\r\nHost: ${HOST}\r\n\r\n` + `GET /two HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;

let pki: Pki;
let web: TestBackend;
let pass: TestBackend;

const cluster = (address: string) => ({ subclusters: { s: { weight: 1, backends: [{ address }] } } });
const terminate = {
  name: 'tls',
  address: '127.0.0.1:0',
  tls: 'terminate',
  certificates: [{ cert: 'www.crt', key: 'www.key' }],
};
const book = () => ({
  name: 'bfe',
  products: {
    www: { hosts: [HOST], rules: [{ cond: 'default_t()', cluster: 'web' }] },
    pass: { hosts: ['pass.example.test'], rules: [{ cond: 'default_t()', cluster: 'pass' }] },
  },
  clusters: { web: cluster(web.address), pass: cluster(pass.address) },
});

/** What a terminated TLS 1.3 line carries (an ALPN only when the client offered one). */
const TERMINATED = { secure: true, sni: HOST, tls_version: 'TLSv1.3' };

function tlsFields(r: AccessRecord) {
  return { secure: r.secure, sni: r.sni, alpn: r.alpn, tls_version: r.tls_version };
}

beforeAll(async () => {
  pki = await createPki();
  const leaf = await pki.leaf('www', { dns: [HOST, 'pass.example.test'] });
  web = await startHttpBackend('web');
  pass = await startTlsBackend('pass', leaf, ['h2', 'http/1.1']);
});
afterAll(async () => {
  await Promise.all([web.close(), pass.close()]);
  await pki.close();
});

describe('net panel, per-request routing', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await startTestRouter(
      {
        listeners: [
          { name: 'plain', address: '127.0.0.1:0' },
          terminate,
          { name: 'pass', address: '127.0.0.1:0', tls: 'passthrough' },
        ],
        addressBook: book(),
      },
      { dir: pki.dir },
    );
  });
  afterAll(() => router.close());

  it("each request's line carries the TLS facts", async () => {
    const r = await tlsRequest(router.port('tls'), { servername: HOST, ca: pki.ca.certPem, send: TWO_REQUESTS });
    expect(r.error).toBeUndefined();
    // Per-request routing writes the requests' lines (log.accessMode auto), not the connection's.
    const lines = await router.waitForAccess(2);
    expect(lines.map((l) => [l.line, l.path])).toEqual([
      ['request', '/one'],
      ['request', '/two'],
    ]);
    for (const l of lines) expect(l).toMatchObject(TERMINATED);
  });

  it('a passthrough line has the SNI, the ALPN offered and the highest version offered', async () => {
    const before = router.access.length;
    const r = await tlsRequest(router.port('pass'), {
      servername: 'pass.example.test',
      alpn: ['h2', 'http/1.1'],
      ca: pki.ca.certPem,
    });
    expect(r.error).toBeUndefined();
    const lines = await router.waitForAccess(before + 1);
    expect(tlsFields(lines[before]!)).toEqual({
      secure: true,
      sni: 'pass.example.test',
      alpn: 'h2,http/1.1',
      tls_version: 'TLSv1.3',
    });
    expect(lines[before]).toMatchObject({ protocol: 'tls', cluster: 'pass', result: 'ok' });
  });

  it('a plain line has none of them', async () => {
    const before = router.access.length;
    expect((await httpGet(router.port('plain'), '/', { host: HOST })).status).toBe(200);
    const lines = await router.waitForAccess(before + 1);
    for (const l of lines.slice(before)) expect(tlsFields(l)).toEqual({});
  });
});

describe('net panel, per-connection routing', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await startTestRouter(
      { routing: 'per-connection', listeners: [terminate], addressBook: book() },
      { dir: pki.dir },
    );
  });
  afterAll(() => router.close());

  it("the connection's line carries the TLS facts and the ALPN agreed", async () => {
    const r = await tlsRequest(router.port('tls'), {
      servername: HOST,
      alpn: ['http/1.1'],
      ca: pki.ca.certPem,
      send: `GET / HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`,
    });
    expect(r.error).toBeUndefined();
    const [line] = await router.waitForAccess(1);
    expect(r.alpn).toBe('http/1.1');
    expect(line).toMatchObject({ ...TERMINATED, alpn: 'http/1.1', cluster: 'web' });
  });
});

describe('http2 panel and worker panel', () => {
  it('an HTTP/2 stream line over TLS has the ALPN h2', async () => {
    const router = await startTestRouter(
      { panel: 'http2', listeners: [terminate], addressBook: book() },
      { dir: pki.dir },
    );
    try {
      const session = connect(`https://127.0.0.1:${router.port('tls')}`, { ca: pki.ca.certPem, servername: HOST });
      try {
        expect((await h2Request(session, { ':path': '/h2', ':authority': HOST })).status).toBe(200);
      } finally {
        session.close();
      }
      const [line] = await router.waitForAccess(1);
      expect(line).toMatchObject({ ...TERMINATED, alpn: 'h2', protocol: 'h2', path: '/h2' });
    } finally {
      await router.close();
    }
  });

  it("a worker thread's lines, written by the main thread, carry them too", async () => {
    const router = await startTestRouter(
      { panel: { name: 'worker', threads: 1 }, listeners: [terminate], addressBook: book() },
      { dir: pki.dir },
    );
    try {
      const r = await tlsRequest(router.port('tls'), { servername: HOST, ca: pki.ca.certPem, send: TWO_REQUESTS });
      expect(r.error).toBeUndefined();
      const lines = await router.waitForAccess(2);
      expect(lines.map((l) => l.path)).toEqual(['/one', '/two']);
      for (const l of lines) expect(l).toMatchObject({ ...TERMINATED, line: 'request' });
    } finally {
      await router.close();
    }
  });
});
