/**
 * One client address everywhere (issue 9 §2): the PROXY source is the client for the access log,
 * `req_cip_*` and hashing; the PROXY destination is the VIP (`req_vip_*`, VIP → product);
 * `ses_sip_range` is the PROXY source (or socket peer), never a forwarded header; a
 * `clientIpFrom: header` listener believes X-Forwarded-For only from `trustedSources`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProxyV1 } from '../../src/proxy-protocol/index.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

const NAMES = ['vipc', 'cip', 'sip', 'dflt', 'vipprod', 's0', 's1', 's2', 's3'] as const;
const backends = new Map<string, TestBackend>();
let router: TestRouter;

const one = (name: string) => ({
  subclusters: { a: { weight: 1, backends: [{ address: backends.get(name)!.address }] } },
});

beforeAll(async () => {
  for (const n of NAMES) backends.set(n, await startHttpBackend(n));
  const local = ['127.0.0.0/8', '::1/128'];
  router = await startTestRouter({
    listeners: [
      { name: 'pp', address: '127.0.0.1:0', proxyProtocol: 'any', trustedSources: local },
      { name: 'plain', address: '127.0.0.1:0' },
      { name: 'hdr', address: '127.0.0.1:0', clientIpFrom: 'header', trustedSources: local },
      {
        name: 'real',
        address: '127.0.0.1:0',
        clientIpFrom: 'header',
        clientIpHeader: 'X-Real-IP',
        trustedSources: local,
      },
      { name: 'hdrUntrusted', address: '127.0.0.1:0', clientIpFrom: 'header', trustedSources: ['10.0.0.0/8'] },
      {
        name: 'ppHdr',
        address: '127.0.0.1:0',
        proxyProtocol: 'any',
        clientIpFrom: 'header',
        trustedSources: [...local, '203.0.113.0/24'],
      },
    ],
    addressBook: {
      name: 'bfe',
      products: {
        web: {
          hosts: ['www.example.test'],
          rules: [
            { cond: 'req_vip_in("198.51.100.88")', cluster: 'vipc' },
            { cond: 'req_cip_range("203.0.113.0", "203.0.113.255") && req_cip_trusted()', cluster: 'cip' },
            { cond: 'ses_sip_range("203.0.113.0", "203.0.113.255")', cluster: 'sip' },
            { cond: 'default_t()', cluster: 'dflt' },
          ],
        },
        byVip: { vips: ['198.51.100.77'], rules: [{ cond: 'default_t()', cluster: 'vipprod' }] },
        sticky: { hosts: ['sticky.test'], rules: [{ cond: 'default_t()', cluster: 'stick' }] },
      },
      clusters: {
        vipc: one('vipc'),
        cip: one('cip'),
        sip: one('sip'),
        dflt: one('dflt'),
        vipprod: one('vipprod'),
        stick: {
          balance: 'sticky',
          hash: { strategy: 'client-ip' },
          subclusters: {
            a: { weight: 1, backends: ['s0', 's1', 's2', 's3'].map((n) => ({ address: backends.get(n)!.address })) },
          },
        },
      },
    },
  });
});
afterAll(async () => {
  await router?.close();
  await Promise.all([...backends.values()].map((b) => b.close()));
});

interface Sent {
  status: number;
  backend: string | undefined;
  client: string;
}

/** One HTTP/1 request through `listener`, optionally behind a PROXY v1 header; what served it. */
async function send(
  listener: string,
  opts: { host?: string; proxy?: [src: string, sport: number, dst: string, dport: number]; headers?: string[] } = {},
): Promise<Sent> {
  const head = [
    'GET / HTTP/1.1',
    `Host: ${opts.host ?? 'www.example.test'}`,
    'Connection: close',
    ...(opts.headers ?? []),
    '',
    '',
  ].join('\r\n');
  const p = opts.proxy;
  const prefix =
    p === undefined
      ? Buffer.alloc(0)
      : encodeProxyV1({ source: { ip: p[0], port: p[1] }, destination: { ip: p[2], port: p[3] } });
  const before = router.access.length;
  const reply = await rawRequest(router.port(listener), Buffer.concat([prefix, Buffer.from(head, 'latin1')]));
  await router.waitForAccess(before + 1);
  const text = reply.toString('latin1');
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  return {
    status: statusOf(reply),
    backend: statusOf(reply) === 200 ? (JSON.parse(body) as { backend: string }).backend : undefined,
    client: router.access[before]!.client,
  };
}

describe('PROXY source and destination drive routing', () => {
  it('the PROXY source is the client: req_cip_range and req_cip_trusted match it, the access log names it', async () => {
    const r = await send('pp', { proxy: ['203.0.113.5', 5555, '198.51.100.1', 80] });
    expect(r).toEqual({ status: 200, backend: 'cip', client: '203.0.113.5:5555' });
  });

  it('a source outside the range routes by default (the rule can fail)', async () => {
    const r = await send('pp', { proxy: ['192.0.2.5', 5556, '198.51.100.1', 80] });
    expect(r).toEqual({ status: 200, backend: 'dflt', client: '192.0.2.5:5556' });
  });

  it('the PROXY destination is the VIP: req_vip_in matches it', async () => {
    const r = await send('pp', { proxy: ['192.0.2.5', 5557, '198.51.100.88', 443] });
    expect(r.backend).toBe('vipc');
  });

  it('VIP → product: an unknown host falls back to the product listing the PROXY destination', async () => {
    const r = await send('pp', { host: 'unknown.test', proxy: ['192.0.2.5', 5558, '198.51.100.77', 443] });
    expect(r.backend).toBe('vipprod');
    // Same host, another VIP or no PROXY header: no product, 404.
    expect((await send('pp', { host: 'unknown.test', proxy: ['192.0.2.5', 5559, '198.51.100.78', 443] })).status).toBe(
      404,
    );
    expect((await send('plain', { host: 'unknown.test' })).status).toBe(404);
  });
});

describe('clientIpFrom: header', () => {
  it('believes X-Forwarded-For from a trusted peer: the rightmost untrusted hop is the client', async () => {
    const r = await send('hdr', { headers: ['X-Forwarded-For: 198.51.100.200, 203.0.113.20'] });
    expect(r).toEqual({ status: 200, backend: 'cip', client: '203.0.113.20:0' });
  });

  it('believes X-Real-IP when configured', async () => {
    const r = await send('real', { headers: ['X-Real-IP: 203.0.113.21', 'X-Forwarded-For: 192.0.2.1'] });
    expect(r).toEqual({ status: 200, backend: 'cip', client: '203.0.113.21:0' });
  });

  it('ignores X-Forwarded-For from a peer outside trustedSources (no client picks its own address)', async () => {
    const r = await send('hdrUntrusted', { headers: ['X-Forwarded-For: 203.0.113.20'] });
    expect(r.backend).toBe('dflt');
    expect(r.client).toMatch(/^(::ffff:)?127\.0\.0\.1:\d+$/);
  });

  it('ignores X-Forwarded-For on a clientIpFrom: connection listener', async () => {
    const r = await send('plain', { headers: ['X-Forwarded-For: 203.0.113.20'] });
    expect(r.backend).toBe('dflt');
  });

  it('ignores X-Forwarded-For from an untrusted PROXY source, even behind a trusted balancer', async () => {
    const r = await send('ppHdr', {
      proxy: ['192.0.2.7', 7000, '198.51.100.1', 80],
      headers: ['X-Forwarded-For: 203.0.113.20'],
    });
    expect(r).toEqual({ status: 200, backend: 'dflt', client: '192.0.2.7:7000' });
  });

  it('ses_sip_range reads the PROXY source, not the forwarded header', async () => {
    // Trusted PROXY source 203.0.113.5 forwards for 192.0.2.9: req_cip is 192.0.2.9 (no cip match),
    // the session source is still 203.0.113.5 (sip matches).
    const r = await send('ppHdr', {
      proxy: ['203.0.113.5', 7001, '198.51.100.1', 80],
      headers: ['X-Forwarded-For: 192.0.2.9'],
    });
    expect(r).toEqual({ status: 200, backend: 'sip', client: '192.0.2.9:0' });
  });

  it('config: clientIpFrom header without trustedSources is refused', async () => {
    await expect(
      startTestRouter({
        listeners: [{ name: 'x', address: '127.0.0.1:0', clientIpFrom: 'header' }],
        addressBook: { name: 'bfe', products: {}, clusters: {} },
      }),
    ).rejects.toThrow(/listeners\[0\]\.trustedSources: clientIpFrom header needs trustedSources/);
  });
});

describe('client-ip hashing follows the PROXY source', () => {
  it('one source always lands on one backend, whatever its socket; different sources spread', async () => {
    const pick = async (src: string, port: number) =>
      (await send('pp', { host: 'sticky.test', proxy: [src, port, '198.51.100.1', 80] })).backend;
    const first = await pick('203.0.113.50', 1000);
    expect(first).toMatch(/^s[0-3]$/);
    for (let i = 1; i <= 5; i++) expect(await pick('203.0.113.50', 1000 + i)).toBe(first);
    const seen = new Set<string | undefined>();
    for (let i = 0; i < 16; i++) seen.add(await pick(`198.51.100.${i + 1}`, 2000 + i));
    // 16 sources on one backend out of 4 would happen with probability 4^-15 under a real hash.
    expect(seen.size).toBeGreaterThan(1);
  });
});
