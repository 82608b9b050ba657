/**
 * TLS passthrough end to end (issue 8 §2, reference peers-reliability.md §5): real TLS clients
 * (Node `tls`, `openssl s_client`) through the router to TLS backends that report the SNI and
 * ALPN they saw. The router only peeks at the ClientHello; the backend does the handshake.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alpnExt, ext, handshake, helloBody, records, sniExt, unframe, vec } from '../fixtures/tls/hello-builder.ts';
import { startTcpBackend, type TcpBackend, type TestBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import { rawRequest } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { startRelay, startTlsBackend, type TlsReport, tlsRequest } from '../harness/tls-backend.ts';

const cluster = (address: string) => ({ subclusters: { s: { weight: 1, backends: [{ address }] } } });

/** The bfe table: SNI picks the product; ALPN, SNI and secure conditions pick the cluster. */
function book(b: Record<string, TestBackend>, withDefault: boolean) {
  return {
    name: 'bfe',
    ...(withDefault ? { defaultProduct: 'fallback' } : {}),
    products: {
      tlsp: {
        hosts: ['a.example.test', 'b.example.test', '*.wild.test'],
        rules: [
          // Passthrough has no path: a path condition never matches (issue 8 §2).
          { cond: 'req_path_prefix_in("/", false)', cluster: 'never' },
          { cond: 'ses_tls_alpn_in("h2")', cluster: 'h2' },
          { cond: 'ses_tls_sni_in("b.example.test") && req_proto_secure()', cluster: 'b' },
          { cond: 'default_t()', cluster: 'a' },
        ],
      },
      fallback: { rules: [{ cond: 'default_t()', cluster: 'dflt' }] },
    },
    clusters: {
      a: cluster(b.a!.address),
      b: cluster(b.b!.address),
      h2: cluster(b.h2!.address),
      dflt: cluster(b.dflt!.address),
      never: cluster(b.never!.address),
    },
  };
}

function report(data: string): TlsReport {
  return JSON.parse(data.trim()) as TlsReport;
}

describe('tls passthrough: routing by SNI and ALPN to TLS backends', () => {
  let pki: Pki;
  const b: Record<string, TestBackend> = {};
  let tcp: TcpBackend;
  let router: TestRouter;
  let strict: TestRouter;

  beforeAll(async () => {
    pki = await createPki();
    const leaf = await pki.leaf('backend', { dns: ['a.example.test', 'b.example.test', '*.wild.test', 'none.test'] });
    for (const name of ['a', 'b', 'dflt', 'never']) b[name] = await startTlsBackend(name, leaf, ['h2', 'http/1.1']);
    b.h2 = await startTlsBackend('h2', leaf, ['h2', 'http/1.1']);
    tcp = await startTcpBackend('raw', (s) => s.on('end', () => s.end()));
    router = await startTestRouter({
      listeners: [
        { name: 'off', address: '127.0.0.1:0' },
        { name: 'pass', address: '127.0.0.1:0', tls: 'passthrough' },
      ],
      addressBook: book(b, true),
    });
    // No defaultProduct: a hello without SNI has no route. `raw` records exact bytes.
    strict = await startTestRouter({
      addressBook: {
        ...book(b, false),
        products: {
          ...book(b, false).products,
          raw: { hosts: ['raw.test'], rules: [{ cond: 'default_t()', cluster: 'raw' }] },
        },
        clusters: { ...book(b, false).clusters, raw: cluster(tcp.address) },
      },
    });
  });
  afterAll(async () => {
    await router.close();
    await strict.close();
    await Promise.all([...Object.values(b).map((x) => x.close()), tcp.close()]);
    await pki.close();
  });

  it.each([
    ['off', 'a.example.test', 'a'],
    ['off', 'b.example.test', 'b'],
    ['pass', 'A.Example.TEST', 'a'],
    ['pass', 'b.example.test', 'b'],
    ['pass', 'x.wild.test', 'a'],
  ])('listener %s: SNI %s → backend %s, which sees that SNI and verifies', async (listener, sni, want) => {
    const res = await tlsRequest(router.port(listener), { servername: sni, ca: pki.ca.certPem, alpn: ['http/1.1'] });
    expect(res.error).toBeUndefined();
    expect(res.authorized).toBe(true);
    const r = report(res.data);
    expect(r.backend).toBe(want);
    expect(r.sni).toBe(sni);
  });

  it('routes by offered ALPN: h2 and http/1.1 reach different clusters', async () => {
    const h2 = await tlsRequest(router.port('pass'), { servername: 'a.example.test', alpn: ['h2', 'http/1.1'] });
    const h1 = await tlsRequest(router.port('pass'), { servername: 'a.example.test', alpn: ['http/1.1'] });
    expect(report(h2.data)).toMatchObject({ backend: 'h2', alpn: 'h2' });
    expect(report(h1.data)).toMatchObject({ backend: 'a', alpn: 'http/1.1' });
  });

  it('openssl s_client -servername reaches the backend chosen by SNI', async () => {
    const out = await new Promise<string>((resolve) => {
      const child = spawn('openssl', [
        's_client',
        '-connect',
        `127.0.0.1:${router.port('pass')}`,
        '-servername',
        'b.example.test',
        '-CAfile',
        pki.ca.cert,
        '-verify_return_error',
        '-quiet',
      ]);
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', () => {});
      child.on('close', () => resolve(text));
      child.stdin.end();
      setTimeout(() => child.kill(), 10_000).unref();
    });
    expect(report(out)).toMatchObject({ backend: 'b', sni: 'b.example.test' });
  });

  it.each([
    ['one byte per write', (rec: Buffer) => [...rec].map((x) => Buffer.from([x]))],
    [
      'split across two TLS records (cut inside the hello)',
      (rec: Buffer) => {
        const msg = unframe(rec);
        return [records(msg, [Math.floor(msg.length / 2)])];
      },
    ],
    [
      'two records, each written one byte at a time',
      (rec: Buffer) => [...records(unframe(rec), [60])].map((x) => Buffer.from([x])),
    ],
  ])('a real ClientHello %s still completes the handshake', async (_what, reshape) => {
    const relay = await startRelay(router.port('pass'), reshape);
    try {
      const res = await tlsRequest(relay.port, { servername: 'b.example.test', ca: pki.ca.certPem });
      expect(res.error).toBeUndefined();
      expect(report(res.data)).toMatchObject({ backend: 'b', sni: 'b.example.test' });
    } finally {
      await relay.close();
    }
  });

  it('no SNI → the book defaultProduct', async () => {
    const res = await tlsRequest(router.port('pass'), {});
    expect(report(res.data)).toMatchObject({ backend: 'dflt', sni: null });
  });

  it('no SNI and no defaultProduct → closed with no_route, no backend touched', async () => {
    const before = Object.values(b).reduce((n, x) => n + x.hits, 0);
    const res = await tlsRequest(strict.port(), {});
    expect(res.data).toBe('');
    await eventually(() => strict.access.some((r) => r.result === 'no_route' && r.protocol === 'tls'));
    expect(Object.values(b).reduce((n, x) => n + x.hits, 0)).toBe(before);
  });

  it('GREASE extension, cipher and ALPN values are skipped; the exact bytes reach the backend', async () => {
    // RFC 8701 §2: 0x?A?A code points. A GREASE extension first, a GREASE ALPN id in the list.
    const grease = ext(0x1a1a, Buffer.alloc(0));
    const hello = records(
      handshake(
        helloBody([
          grease,
          sniExt('raw.test'),
          alpnExt(Buffer.from([0x3a, 0x3a]), 'http/1.1'),
          ext(0x2a2a, vec(1, Buffer.from([0]))),
        ]),
      ),
    );
    const seen = tcp.hits;
    await rawRequest(strict.port(), hello, { end: true, timeoutMs: 2000 });
    await eventually(() => tcp.hits > seen && tcp.all().includes(hello), 10_000, 'the hello at the raw backend');
    await eventually(() => strict.access.some((r) => r.host === 'raw.test' && r.cluster === 'raw'));
  });

  it('garbage after 0x16 is closed without touching a backend', async () => {
    const before = tcp.hits + Object.values(b).reduce((n, x) => n + x.hits, 0);
    const garbage = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x10, 0x02]), Buffer.alloc(15, 0xff)]);
    const res = await rawRequest(strict.port(), garbage);
    expect(res.length).toBe(0);
    await eventually(() => strict.access.some((r) => r.result === 'bad_request'));
    expect(tcp.hits + Object.values(b).reduce((n, x) => n + x.hits, 0)).toBe(before);
  });

  it('an oversized hello (beyond maxHeaderBytes) is closed without touching a backend', async () => {
    const before = tcp.hits;
    const big = records(handshake(helloBody([sniExt('raw.test'), ext(0xffce, Buffer.alloc(20_000, 1))])), [16_000]);
    const res = await rawRequest(strict.port(), big);
    expect(res.length).toBe(0);
    expect(tcp.hits).toBe(before);
  });

  it('tls: passthrough refuses plaintext HTTP with 400', async () => {
    const res = await rawRequest(router.port('pass'), 'GET / HTTP/1.1\r\nHost: a.example.test\r\n\r\n');
    expect(res.toString('latin1')).toMatch(/^HTTP\/1\.1 400 /);
  });
});
