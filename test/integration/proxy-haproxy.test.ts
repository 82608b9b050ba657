/**
 * Interop with HAProxy (skipped when it is not installed), loopback only:
 *
 *   client ──► HAProxy fe_in (mode tcp, send-proxy-v2 + crc32c) ──► Switchboard `pp` (proxyProtocol v2)
 *                                                                       │ cluster proxyProtocol v1 | v2
 *   client ──► Switchboard `plain` / `pp` ─────────────────────────────►┴──► HAProxy fe_pp (accept-proxy),
 *                                                                            answers "%[src]:%[src_port] %[dst]:%[dst_port]"
 *
 * HAProxy is an independent sender and receiver: what it answers is what it decoded from our header.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProxyV2 } from '../../src/proxy-protocol/index.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { freePort, type Haproxy, haproxyAvailable, startHaproxy } from '../harness/haproxy.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

/** Sends one request to 127.0.0.1:port; resolves with our socket's local port and the reply. */
function exchange(port: number, bytes: Buffer): Promise<{ localPort: number; reply: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' });
    let localPort = 0;
    const chunks: Buffer[] = [];
    s.on('connect', () => {
      localPort = s.localPort ?? 0;
      s.write(bytes);
    });
    s.on('data', (c) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve({ localPort, reply: Buffer.concat(chunks).toString('latin1') }));
    s.setTimeout(5000, () => s.destroy());
  });
}

const get = (host: string) => Buffer.from(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 'latin1');
const bodyOf = (reply: string) => reply.slice(reply.indexOf('\r\n\r\n') + 4);

describe.skipIf(!haproxyAvailable())('HAProxy interop', () => {
  let backend: TestBackend;
  let router: TestRouter;
  let haproxy: Haproxy;
  let feIn = 0;

  beforeAll(async () => {
    backend = await startHttpBackend('web');
    const fePp = await freePort();
    const target = (version: string) => ({
      proxyProtocol: version,
      subclusters: { a: { weight: 1, backends: [{ address: `127.0.0.1:${fePp}` }] } },
    });
    router = await startTestRouter({
      listeners: [
        { name: 'pp', address: '127.0.0.1:0', proxyProtocol: 'v2', trustedSources: ['127.0.0.0/8'] },
        { name: 'plain', address: '127.0.0.1:0' },
      ],
      addressBook: {
        name: 'bfe',
        products: {
          web: {
            hosts: ['web.test', 'v1.test', 'v2.test'],
            rules: [
              { cond: 'req_host_in("v1.test")', cluster: 'hv1' },
              { cond: 'req_host_in("v2.test")', cluster: 'hv2' },
              { cond: 'default_t()', cluster: 'web' },
            ],
          },
        },
        clusters: {
          web: { subclusters: { a: { weight: 1, backends: [{ address: backend.address }] } } },
          hv1: target('v1'),
          hv2: target('v2'),
        },
      },
    });
    feIn = await freePort();
    haproxy = await startHaproxy(
      [
        'frontend fe_in',
        `  bind 127.0.0.1:${feIn}`,
        '  mode tcp',
        '  default_backend be_swb',
        'backend be_swb',
        '  mode tcp',
        `  server swb 127.0.0.1:${router.port('pp')} send-proxy-v2 proxy-v2-options crc32c`,
        'frontend fe_pp',
        `  bind 127.0.0.1:${fePp} accept-proxy`,
        '  mode http',
        '  http-request return status 200 content-type text/plain lf-string "%[src]:%[src_port] %[dst]:%[dst_port]"',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await haproxy?.close();
    await router?.close();
    await backend?.close();
  });

  it('HAProxy send-proxy-v2 (with CRC32C) in front: the client behind HAProxy is the client', async () => {
    const before = router.access.length;
    const { localPort, reply } = await exchange(feIn, get('web.test'));
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(bodyOf(reply)).backend).toBe('web');
    await router.waitForAccess(before + 1);
    // HAProxy's own outgoing port would differ: only the PROXY source carries ours.
    expect(router.access[before]!.client).toBe(`127.0.0.1:${localPort}`);
    expect(router.access[before]!.result).toBe('ok');
  });

  it('Switchboard v1 out to HAProxy accept-proxy: HAProxy sees our client and our listener', async () => {
    const { localPort, reply } = await exchange(router.port('plain'), get('v1.test'));
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    expect(bodyOf(reply)).toBe(`127.0.0.1:${localPort} 127.0.0.1:${router.port('plain')}`);
  });

  it('Switchboard v2 out relays the addresses it was given (spec §3 chains)', async () => {
    const header = encodeProxyV2({
      command: 'proxy',
      source: { ip: '203.0.113.5', port: 4242 },
      destination: { ip: '198.51.100.1', port: 8443 },
    });
    const { reply } = await exchange(router.port('pp'), Buffer.concat([header, get('v2.test')]));
    expect(bodyOf(reply)).toBe('203.0.113.5:4242 198.51.100.1:8443');
  });

  it('the whole chain: HAProxy → Switchboard → HAProxy keeps the original client', async () => {
    const { localPort, reply } = await exchange(feIn, get('v2.test'));
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    expect(bodyOf(reply)).toMatch(new RegExp(`^127\\.0\\.0\\.1:${localPort} 127\\.0\\.0\\.1:${feIn}$`));
  });
});
