/**
 * Which `policies:` rule would fire for a request and a client address (issue 42 item 5):
 * `switchboard route` (the real CLI) and the dashboard's explainer (`POST /explain` on a real
 * router) say the same, and explaining takes nothing: a rate limit of burst 1 explained many
 * times still lets the first real request through.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { runCli } from '../harness/cli-run.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const TOKEN = 'explain-s3cret';
const POLICIES = [
  { name: 'deny', use: 'block', point: 'connection', options: { cidrs: ['203.0.113.0/24'] } },
  {
    name: 'api-rate',
    use: 'rate-limit',
    when: 'req_path_prefix_in("/api", false)',
    options: { key: 'client-ip', rate: '1/m', burst: 1 },
  },
  {
    name: 'https',
    use: 'redirect',
    when: 'req_path_prefix_in("/shop", false)',
    options: { scheme: 'https', status: 308 },
  },
  { name: 'office', use: 'block', when: 'req_path_prefix_in("/office", false)', options: { cidrs: ['10.0.0.0/8'] } },
];

describe('explaining policies: switchboard route and the dashboard explainer', () => {
  let backend: TestBackend;
  let router: TestRouter;
  let config: string;
  let admin: string;

  beforeAll(async () => {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      {
        admin: { address: '127.0.0.1:0', token: TOKEN },
        addressBook: { name: 'file', path: 'servers.yaml' },
        policies: POLICIES,
      },
      { dir },
    );
    config = join(dir, 'switchboard.yaml');
    admin = `http://127.0.0.1:${router.router.admin?.address().port}`;
  });
  afterAll(async () => {
    await router?.close();
    await backend?.close();
  });

  const route = async (...args: string[]) => {
    const r = await runCli(['route', '--config', config, '--host', 'a.test', ...args]);
    return { code: r.code, lines: r.stdout.split('\n').filter((l) => l.startsWith('policy: ')), stdout: r.stdout };
  };
  const explain = async (body: object) => {
    const res = await fetch(`${admin}/explain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ host: 'a.test', ...body }),
    });
    return (await res.json()) as { text: string; explanation: { policies: unknown[] } };
  };

  it('a counting rule applies (fires only over its limit); a redirect says its answer', async () => {
    expect((await route('--path', '/api/x')).lines).toEqual([
      'policy: deny (block) at connection: passes',
      'policy: api-rate (rate-limit) at request: applies, fires only over its limit',
    ]);
    const shop = await route('--path', '/shop/a?x=1');
    expect(shop.code).toBe(0);
    expect(shop.lines).toEqual([
      'policy: deny (block) at connection: passes',
      'policy: https (redirect) at request: fires, answer 308 Location https://a.test/shop/a?x=1',
    ]);
  });

  it('the client address decides: a listed client is closed at connection, and nothing after it runs', async () => {
    expect((await route('--path', '/api/x', '--client', '203.0.113.5')).lines).toEqual([
      'policy: deny (block) at connection: fires, close',
    ]);
    expect((await route('--path', '/office', '--client', '10.1.2.3')).lines).toEqual([
      'policy: deny (block) at connection: passes',
      'policy: office (block) at request: fires, answer 403',
    ]);
    expect((await route('--path', '/office', '--client', '192.0.2.1')).lines).toEqual([
      'policy: deny (block) at connection: passes',
      'policy: office (block) at request: passes',
    ]);
    // A client not on the list, a path no `when:` selects: only the list was looked at.
    expect((await route('--path', '/')).lines).toEqual(['policy: deny (block) at connection: passes']);
  });

  it('--json lists the rules', async () => {
    const r = await runCli(['route', '--config', config, '--host', 'a.test', '--path', '/shop', '--json']);
    expect((JSON.parse(r.stdout) as { policies: unknown }).policies).toEqual([
      {
        rule: 'deny',
        policy: 'block',
        point: 'connection',
        outcome: 'passes',
        action: null,
        status: null,
        location: null,
      },
      {
        rule: 'https',
        policy: 'redirect',
        point: 'request',
        outcome: 'fires',
        action: 'answer',
        status: 308,
        location: 'https://a.test/shop',
      },
    ]);
  });

  it('the dashboard explainer says what the CLI says, and explaining takes no token', async () => {
    // The running router's answer (live state), as the dashboard's.
    const args = ['--host', 'a.test', '--path', '/api/x', '--admin', admin, '--token', TOKEN];
    const cli = await runCli(['route', '--config', config, ...args]);
    for (let i = 0; i < 5; i++) {
      const e = await explain({ path: '/api/x' });
      expect(e.text).toBe(cli.stdout);
      expect(e.explanation.policies).toEqual([
        {
          rule: 'deny',
          policy: 'block',
          point: 'connection',
          outcome: 'passes',
          action: null,
          status: null,
          location: null,
        },
        {
          rule: 'api-rate',
          policy: 'rate-limit',
          point: 'request',
          outcome: 'applies',
          action: null,
          status: null,
          location: null,
        },
      ]);
    }
    // Burst 1 at 1 a minute: the first real request passes (the explanations took nothing), the next is 429.
    const get = () => fetch(`http://127.0.0.1:${router.port()}/api/x`, { headers: { host: 'a.test' } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
  });
});
