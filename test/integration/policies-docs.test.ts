/**
 * docs/policies.md's worked examples work as written (issue 42, done-when): each `<!-- example:
 * NAME -->` YAML block is read from the page and run through the real router (net panel,
 * per-request routing) with the files it names beside the config; the requests the page
 * describes get the answers it says. The `in-flight` example is covered by the policy
 * conformance table on every panel (test/conformance/scenarios-policies*.ts).
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const PAGE = readFileSync(join(import.meta.dirname, '../../docs/policies.md'), 'utf8');

/** The `policies:` list of the page's example `name`. */
function example(name: string): unknown[] {
  return exampleConfig(name).policies;
}

/** The whole YAML of the page's example `name` (`policies:`, and `listeners:` when it has them). */
function exampleConfig(name: string): { policies: unknown[]; listeners?: Record<string, unknown>[] } {
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`yaml\\n([\\s\\S]*?)\`\`\``).exec(PAGE);
  if (m === null) throw new Error(`docs/policies.md has no example ${name}`);
  return parse(m[1] as string) as { policies: unknown[]; listeners?: Record<string, unknown>[] };
}

/** The first plain code block after the example `name` (a list file shown beside it). */
function exampleFile(name: string): string {
  const at = PAGE.indexOf(`<!-- example: ${name} -->`);
  const m = /```\n([\s\S]*?)```/.exec(PAGE.slice(at));
  if (m === null) throw new Error(`docs/policies.md: no file after example ${name}`);
  return m[1] as string;
}

interface Reply {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  /** The whole body is in (its Content-Length). */
  readonly complete: boolean;
}

/** The HTTP/1.1 responses in `data` (every one here has a Content-Length). */
function replies(data: string): Reply[] {
  return data
    .split(/(?=HTTP\/1\.1 \d{3} )/)
    .filter((r) => r.startsWith('HTTP/1.1'))
    .map((r) => {
      const cut = r.indexOf('\r\n\r\n');
      const head = cut < 0 ? r : r.slice(0, cut);
      const body = cut < 0 ? '' : r.slice(cut + 4);
      const length = /\r\ncontent-length: (\d+)/i.exec(head);
      return {
        status: Number(r.slice(9, 12)),
        head,
        body,
        complete: length !== null && body.length >= Number(length[1]),
      };
    });
}

/** Writes `requests` on one connection (from `from`); resolves with the responses once `count` are whole or the router closed. */
function send(port: number, requests: string, count: number, from = '127.0.0.1'): Promise<Reply[]> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
      const got = replies(data);
      if (got.length >= count && got.at(-1)?.complete === true) s.destroy();
    });
    s.on('error', () => {});
    s.once('close', () => resolve(replies(data)));
    s.write(requests);
  });
}

const get = (path: string, host = 'a.example.com', extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;

describe('docs/policies.md worked examples through the real router', () => {
  let backend: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
    router = undefined;
    backend = undefined;
  });

  async function start(
    policies: unknown[],
    files: Record<string, string> = {},
    extra: Record<string, unknown> = {},
  ): Promise<TestRouter> {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n`, ...files });
    router = await startTestRouter(
      { routing: 'per-request', addressBook: { name: 'file', path: 'servers.yaml' }, policies, ...extra },
      { dir },
    );
    return router;
  }

  it('block: /admin from outside 10/8 gets the 403, / is forwarded, a listed client is closed at accept', async () => {
    // The page's deny.txt, plus 127.0.0.2 so a test client can be in it.
    const r = await start(example('block'), { 'deny.txt': `${exampleFile('block')}127.0.0.2\n` });
    const replies = await send(r.port(), get('/admin/users') + get('/'), 2);
    expect(replies.map((x) => x.status)).toEqual([403, 200]);
    expect(replies[0]?.body).toBe('admin is internal\n');
    expect(backend?.hits).toBe(1);
    expect(await send(r.port(), get('/'), 1, '127.0.0.2')).toEqual([]);
    expect(backend?.hits).toBe(1);
    await eventually(() => r.access.some((a) => a.policy === 'deny-list'));
    expect(r.access.find((a) => a.policy === 'deny-list')).toMatchObject({ result: 'policy_closed', action: 'close' });
    expect(r.access.find((a) => a.policy === 'admin-internal')).toMatchObject({
      result: 'policy_answered',
      action: 'answer',
      status: 403,
    });
  });

  it('respond: the maintenance host gets the 503 page with Retry-After, another host is forwarded', async () => {
    const page = '<h1>back soon</h1>\n';
    const r = await start(example('respond'), { 'maintenance.html': page });
    const replies = await send(r.port(), get('/', 'shop.example.com') + get('/', 'other.example.com'), 2);
    expect(replies.map((x) => x.status)).toEqual([503, 200]);
    expect(replies[0]?.head).toMatch(/\r\nRetry-After: 120\r\n/);
    expect(replies[0]?.head).toMatch(/\r\nContent-Type: text\/html/);
    expect(replies[0]?.body).toBe(page);
    expect(backend?.hits).toBe(1);
  });

  it('redirect: plain HTTP to HTTPS with path and query kept, the old name straight to the new one', async () => {
    const r = await start(example('redirect'));
    const replies = await send(r.port(), get('/p?q=1') + get('/p?q=1', 'old.example.com'), 2);
    expect(replies.map((x) => x.status)).toEqual([308, 301]);
    expect(replies[0]?.head).toMatch(/\r\nLocation: https:\/\/a\.example\.com\/p\?q=1\r\n/);
    expect(replies[1]?.head).toMatch(/\r\nLocation: https:\/\/new\.example\.com\/p\?q=1\r\n/);
    expect(backend?.hits).toBe(0);
  });

  it('redirect behind a balancer: X-Forwarded-Proto is believed from the trusted L7 hop only', async () => {
    const config = exampleConfig('redirect-behind-balancer');
    // The page's balancer 10.0.0.5 is 127.0.0.5 here, a loopback address the test can bind.
    const listeners = (config.listeners ?? []).map((l) => ({
      ...l,
      address: '0.0.0.0:0',
      trustedSources: ['127.0.0.5/32'],
    }));
    const r = await start(config.policies, {}, { listeners });
    const fwd = (proto: string) => `X-Forwarded-For: 198.51.100.7\r\nX-Forwarded-Proto: ${proto}\r\n`;
    const viaBalancer = await send(r.port(), get('/p', 'a.example.com', fwd('https')), 1, '127.0.0.5');
    expect(viaBalancer.map((x) => x.status)).toEqual([200]);
    const plainAtBalancer = await send(r.port(), get('/p', 'a.example.com', fwd('http')), 1, '127.0.0.5');
    expect(plainAtBalancer.map((x) => x.status)).toEqual([308]);
    expect(plainAtBalancer[0]?.head).toMatch(/\r\nLocation: https:\/\/a\.example\.com\/p\r\n/);
    const direct = await send(r.port(), get('/p', 'a.example.com', fwd('https')), 1, '127.0.0.1');
    expect(direct.map((x) => x.status)).toEqual([308]);
    expect(backend?.hits).toBe(1);
  });

  it('rate-limit: 50 /api requests at once pass 10 (at most 11), the rest get 429 with Retry-After', async () => {
    const r = await start(example('rate-limit'));
    const replies = await send(r.port(), get('/api/x').repeat(50), 50);
    expect(replies).toHaveLength(50);
    const passed = replies.filter((x) => x.status === 200).length;
    expect(passed).toBeGreaterThanOrEqual(10);
    expect(passed).toBeLessThanOrEqual(11);
    const refused = replies.filter((x) => x.status !== 200);
    expect(refused.every((x) => x.status === 429 && /\r\nRetry-After: 1\r\n/.test(x.head))).toBe(true);
    expect(backend?.hits).toBe(passed);
  });
});
