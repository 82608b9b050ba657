/**
 * The example custom policy (examples/policies, issue 42 item 1): `switchboard check` accepts the
 * example config as it stands (its `use: ./header-allow.ts` loads from the examples folder), the
 * real router with the example's rule answers 403 itself and forwards a request with an allowed
 * key, and the module's options schema refuses a bad rule naming its config path.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { runCli, STACK } from '../harness/cli-run.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const EXAMPLE = join(import.meta.dirname, '../../examples/policies');
const MODULE = join(EXAMPLE, 'header-allow.ts');

/** The example's `policies:` with `use:` made absolute, so a config in a temp folder loads the module in place. */
function examplePolicies(): Record<string, unknown>[] {
  const config = parse(readFileSync(join(EXAMPLE, 'switchboard.yaml'), 'utf8')) as {
    policies: Record<string, unknown>[];
  };
  expect(config.policies.map((p) => p.use)).toEqual(['./header-allow.ts']);
  return config.policies.map((p) => ({ ...p, use: MODULE }));
}

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; backend: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path, headers: { host: 'shop.test', ...headers }, agent: false });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, backend: res.headers['x-backend'] as string | undefined }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('examples/policies: header-allow', () => {
  let backend: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      { routing: 'per-request', addressBook: { name: 'file', path: 'servers.yaml' }, policies: examplePolicies() },
      { dir },
    );
  });
  afterAll(async () => {
    await router?.close();
    await backend?.close();
  });

  it('switchboard check accepts the example config in place', async () => {
    const r = await runCli(['check', '--config', join(EXAMPLE, 'switchboard.yaml')]);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.code, r.stderr).toBe(0);
  });

  it('answers 403 without an allowed key and forwards a request that has one', async () => {
    expect(await get(router.port(), '/api/orders')).toEqual({
      status: 403,
      body: 'an X-Api-Key is needed for /api\n',
      backend: undefined,
    });
    expect((await get(router.port(), '/api/orders', { 'X-Api-Key': 'nope' })).status).toBe(403);
    expect(backend.hits).toBe(0);
    expect(await get(router.port(), '/api/orders', { 'X-Api-Key': 'key-two' })).toMatchObject({
      status: 200,
      backend: 'a',
    });
    // Outside /api the rule's when: is false: no key needed.
    expect(await get(router.port(), '/')).toMatchObject({ status: 200, backend: 'a' });
    expect(backend.hits).toBe(2);
    await eventually(() => router.access.filter((a) => a.policy === 'api-key').length === 2);
    expect(router.access.find((a) => a.policy === 'api-key')).toMatchObject({
      result: 'policy_answered',
      action: 'answer',
      status: 403,
    });
  });

  it('its options schema refuses a bad rule, naming the rule and the option', async () => {
    const dir = await tempDir({ 'servers.yaml': '- { host: "*", backends: [127.0.0.1:9] }\n' });
    const file = join(dir, 'switchboard.yaml');
    await writeFile(
      file,
      [
        'listeners: [{ name: web, address: 127.0.0.1:0 }]',
        'addressBook: { name: file, path: servers.yaml }',
        'policies:',
        `  - { name: api-key, use: ${JSON.stringify(MODULE)}, options: { header: X-Api-Key, allow: [] } }`,
        '',
      ].join('\n'),
    );
    const r = await runCli(['check', '--config', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).toMatch(/policies\[0\]\.options\.allow/);
  });
});
