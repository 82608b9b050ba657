/**
 * The admin listener (issue 7 §2): probes, /routes, /backends, /version, POST /reload with and
 * without the bearer token, 404/405.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

async function call(
  port: number,
  path: string,
  init: { method?: string; token?: string } = {},
): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: init.method ?? 'GET',
    headers: init.token === undefined ? {} : { authorization: `Bearer ${init.token}` },
  });
  return { status: res.status, text: await res.text() };
}

describe('admin listener', () => {
  let a: TestBackend;
  let router: TestRouter;
  let admin: number;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '127.0.0.1:0', token: 's3cret' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*.example.test", backends: [${a.address}] }\n` }) },
    );
    admin = router.router.admin!.address().port;
  });
  afterAll(async () => {
    await router.close();
    await a.close();
  });

  it('GET /healthz and /readyz answer 200', async () => {
    expect(await call(admin, '/healthz')).toEqual({ status: 200, text: 'ok\n' });
    expect(await call(admin, '/readyz')).toEqual({ status: 200, text: 'ready\n' });
  });

  it('GET /routes is the book routing table with the config version', async () => {
    const res = await call(admin, '/routes');
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text) as { version: string; routes: { host: string }[] };
    expect(body.version).toBe(router.router.runtime.engine.version);
    expect(body.routes).toEqual([expect.objectContaining({ host: '*.example.test' })]);
  });

  it('GET /backends lists registry state and health', async () => {
    const body = JSON.parse((await call(admin, '/backends')).text) as { backends: Record<string, unknown>[] };
    expect(body.backends).toEqual([
      expect.objectContaining({ id: a.address, available: true, active: 0, healthChecked: true }),
    ]);
  });

  it('GET /version names the config file', async () => {
    const body = JSON.parse((await call(admin, '/version')).text) as { file: string; version: string };
    expect(body.file).toBe(join(router.dir, 'switchboard.yaml'));
    expect(body.version).toMatch(/^[0-9a-f]{12}@\d{4}-/);
  });

  it('POST /reload needs the bearer token: 401 without or with a wrong one', async () => {
    const none = await call(admin, '/reload', { method: 'POST' });
    expect(none.status).toBe(401);
    expect((await call(admin, '/reload', { method: 'POST', token: 'wrong' })).status).toBe(401);
  });

  it('POST /reload with the token: 200 unchanged, 200 changed, 422 with every error on a bad config', async () => {
    const file = join(router.dir, 'switchboard.yaml');
    const same = await call(admin, '/reload', { method: 'POST', token: 's3cret' });
    expect(same.status).toBe(200);
    expect(JSON.parse(same.text)).toMatchObject({ ok: true, changed: false });

    const config = router.router.runtime.engine.loaded.config;
    const raw = {
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: { name: 'file', path: 'servers.yaml' },
      admin: { address: `127.0.0.1:${config.admin!.address.port}`, token: 's3cret' },
      limits: { drainTimeout: '1s', idleTimeout: '5s' },
    };
    await writeFile(file, stringify(raw));
    const changed = await call(admin, '/reload', { method: 'POST', token: 's3cret' });
    expect(changed.status).toBe(200);
    expect(JSON.parse(changed.text)).toMatchObject({ ok: true, changed: true, trigger: 'api' });
    expect(router.router.runtime.engine.limits.idleTimeout).toBe(5000);

    const before = router.router.runtime.engine.version;
    await writeFile(
      file,
      stringify({ ...raw, listeners: [{ name: 'web', address: 'nowhere' }], routing: 'sometimes' }),
    );
    const bad = await call(admin, '/reload', { method: 'POST', token: 's3cret' });
    expect(bad.status).toBe(422);
    const body = JSON.parse(bad.text) as { ok: boolean; errors: string[]; version: string };
    expect(body.ok).toBe(false);
    expect(body.version).toBe(before);
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^listeners\[0\]\.address: /),
        expect.stringMatching(/^routing: /),
      ]),
    );
    expect(router.router.runtime.engine.version).toBe(before);
  });

  it('unknown paths answer 404, known paths with another method 405', async () => {
    expect((await call(admin, '/nope')).status).toBe(404);
    expect((await call(admin, '/reload')).status).toBe(405);
    expect((await call(admin, '/metrics', { method: 'POST' })).status).toBe(405);
  });
});

describe('admin listener off loopback without a token', () => {
  it('refuses POST /reload with 401 but serves the read-only endpoints', async () => {
    const saved = process.env.SWITCHBOARD_ADMIN_TOKEN;
    delete process.env.SWITCHBOARD_ADMIN_TOKEN;
    const dir = await tempDir({ 'servers.yaml': '- { host: "*", backends: [127.0.0.1:1] }\n' });
    const router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '0.0.0.0:0' } },
      { dir },
    );
    try {
      const port = router.router.admin!.address().port;
      expect((await call(port, '/reload', { method: 'POST' })).status).toBe(401);
      expect((await call(port, '/healthz')).status).toBe(200);
      process.env.SWITCHBOARD_ADMIN_TOKEN = 'from-env';
      expect((await call(port, '/reload', { method: 'POST', token: 'from-env' })).status).toBe(200);
    } finally {
      if (saved === undefined) delete process.env.SWITCHBOARD_ADMIN_TOKEN;
      else process.env.SWITCHBOARD_ADMIN_TOKEN = saved;
      await router.close();
    }
  });
});
