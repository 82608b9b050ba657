/**
 * Policies at the `request` and `routed` points (issue 42 step 3), through the real router on
 * the net panel in both routing modes and the http2 panel: an answer in the router's own words,
 * the next request on the same keep-alive connection forwarded (per-request), a close, and the
 * in-flight slot given back when the request ends.
 */
import { connect as h2connect } from 'node:http2';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const WILDCARD = [{ name: 'web', address: '0.0.0.0:0' }];

/** Writes `text` on one connection and resolves with everything read until the router closes or `until` matches. */
function exchange(port: number, text: string, until?: RegExp): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
      if (until?.test(data)) s.destroy();
    });
    s.on('error', () => {});
    s.once('close', () => resolve(data));
    s.write(text);
  });
}

describe('policies at the request and routed points', () => {
  let backend: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
    router = undefined;
    backend = undefined;
  });

  async function start(policies: unknown[], extra: Record<string, unknown> = {}) {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      { listeners: WILDCARD, addressBook: { name: 'file', path: 'servers.yaml' }, policies, ...extra },
      { dir },
    );
    return router;
  }

  const admin = {
    name: 'admin',
    use: 'block',
    when: 'req_path_prefix_in("/admin", false)',
    action: { respond: { status: 403, body: 'no\n', headers: { 'X-Why': 'admin' } } },
  };

  it('per-request: a blocked request is answered 403 and the next request on the connection is forwarded', async () => {
    const r = await start([admin], { routing: 'per-request' });
    const reply = await exchange(
      r.port(),
      'GET /admin/x HTTP/1.1\r\nHost: a.test\r\n\r\nGET /ok HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
    );
    expect(reply).toMatch(/^HTTP\/1\.1 403 Forbidden\r\nContent-Type: text\/plain; charset=utf-8\r\nX-Why: admin\r\n/);
    expect(reply).toContain('Connection: keep-alive\r\n\r\nno\nHTTP/1.1 200 OK');
    expect(backend?.hits).toBe(1);
    await eventually(() => r.access.some((a) => a.policy === 'admin'));
    expect(r.access.find((a) => a.policy === 'admin')).toMatchObject({
      result: 'policy_answered',
      action: 'answer',
      status: 403,
    });
  });

  it('per-connection: the first request is answered with Connection: close', async () => {
    const r = await start([admin], { routing: 'per-connection' });
    const reply = await exchange(r.port(), 'GET /admin HTTP/1.1\r\nHost: a.test\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(reply).toContain('Connection: close\r\n\r\nno\n');
    expect(backend?.hits).toBe(0);
  });

  it('routed: a rule naming a product fires after the book chose it', async () => {
    const r = await start(
      [{ name: 'maint', use: 'respond', products: ['*'], options: { status: 503, body: 'later\n' } }],
      { routing: 'per-request' },
    );
    const reply = await exchange(r.port(), 'GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
  });

  it('http2 panel, HTTP/1.1 client: an answer without a body ends, and the connection goes on', async () => {
    const r = await start([{ ...admin, action: { respond: 403 } }], { panel: 'http2' });
    const reply = await exchange(
      r.port(),
      'GET /admin HTTP/1.1\r\nHost: a.test\r\n\r\nGET /ok HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
    );
    expect(reply).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(reply).toContain('HTTP/1.1 200 OK');
    expect(backend?.hits).toBe(1);
  });

  it('http2 panel, h2 client: one stream answered 403, the next stream of the session forwarded', async () => {
    const r = await start([admin], { panel: 'http2' });
    const session = h2connect(`http://127.0.0.1:${r.port()}`);
    const get = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = session.request({ ':path': path, ':authority': 'a.test' });
        let status = 0;
        let body = '';
        req.on('response', (h) => {
          status = Number(h[':status']);
        });
        req.on('data', (c: Buffer) => {
          body += c.toString();
        });
        req.on('end', () => resolve({ status, body }));
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get('/admin/x')).toEqual({ status: 403, body: 'no\n' });
      expect((await get('/ok')).status).toBe(200);
    } finally {
      session.close();
    }
    expect(backend?.hits).toBe(1);
  });
});
