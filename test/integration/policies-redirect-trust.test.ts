/**
 * `redirect` with `forwardedProto: true` believes `X-Forwarded-Proto` only from an L7 hop
 * (issue 42 item 3): through the real router on the net panel (per-request and per-connection)
 * and the http2 panel.
 *
 * - A PROXY listener: the PROXY sender (an L4 balancer) is trusted for the client address, but
 *   the headers behind it are the client's own. A client sending `X-Forwarded-Proto: https`
 *   is still redirected: it cannot talk its way out of the redirect.
 * - A `clientIpFrom: header` listener: a trusted hop that names the client in
 *   `X-Forwarded-For` and says `X-Forwarded-Proto: https` is forwarded (no redirect loop behind
 *   a TLS-terminating balancer). The same hop without a forwarded client address did not
 *   forward the request as an L7 hop would: the header is not believed.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TRUSTED = ['127.0.0.1/32'];
const LISTENERS = [
  { name: 'l4', address: '127.0.0.1:0', proxyProtocol: 'v1', trustedSources: TRUSTED },
  { name: 'l7', address: '127.0.0.1:0', clientIpFrom: 'header', trustedSources: TRUSTED },
];
const HTTPS = { name: 'https', use: 'redirect', options: { scheme: 'https', status: 308, forwardedProto: true } };

/** Writes `text` on one connection and resolves with everything read until the router closes it. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    s.on('error', () => {});
    s.once('close', () => resolve(data));
    s.write(text);
  });
}

const head = (extra: string) =>
  `GET /p?q=1 HTTP/1.1\r\nHost: shop.test\r\n${extra}X-Forwarded-Proto: https\r\nConnection: close\r\n\r\n`;

const PANELS = [
  { label: 'net per-request', extra: { routing: 'per-request' } },
  { label: 'net per-connection', extra: { routing: 'per-connection' } },
  { label: 'http2', extra: { panel: { name: 'http2' } } },
];

describe.each(PANELS)('redirect trusts X-Forwarded-Proto only from an L7 hop ($label)', ({ extra }) => {
  let backend: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
    router = undefined;
    backend = undefined;
  });

  async function start(): Promise<TestRouter> {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      { listeners: LISTENERS, addressBook: { name: 'file', path: 'servers.yaml' }, policies: [HTTPS], ...extra },
      { dir },
    );
    return router;
  }

  it('behind a PROXY sender the client’s own X-Forwarded-Proto is ignored: redirected', async () => {
    const r = await start();
    const reply = await exchange(r.port('l4'), `PROXY TCP4 203.0.113.7 127.0.0.1 40000 80\r\n${head('')}`);
    expect(reply).toMatch(/^HTTP\/1\.1 308 /);
    expect(reply).toContain('Location: https://shop.test/p?q=1\r\n');
    expect(backend?.hits).toBe(0);
    await eventually(() => r.access.some((a) => a.policy === 'https'));
    expect(r.access.find((a) => a.policy === 'https')).toMatchObject({
      client: expect.stringContaining('203.0.113.7'),
      status: 308,
    });
  });

  it('a trusted L7 hop naming the client: its X-Forwarded-Proto is believed, forwarded', async () => {
    const r = await start();
    const reply = await exchange(r.port('l7'), head('X-Forwarded-For: 203.0.113.7\r\n'));
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    expect(backend?.hits).toBe(1);
  });

  it('the trusted hop without a forwarded client address: not believed, redirected', async () => {
    const r = await start();
    const reply = await exchange(r.port('l7'), head(''));
    expect(reply).toMatch(/^HTTP\/1\.1 308 /);
    expect(backend?.hits).toBe(0);
  });
});
