/**
 * The admin listener (issue 7 §2, issue 17 item 8): probes, /routes, /backends, /version,
 * POST /reload, 404/405, and who may call what: the token on every endpoint but the open ones,
 * the Host check against DNS rebinding, the refusal of cross-site and browser-simple POSTs, and
 * a non-loopback address without a token serving only the open paths.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type HttpAnswer, httpGet } from '../harness/http.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const JSON_TYPE = { 'content-type': 'application/json' };
const READS = ['/metrics', '/routes', '/backends', '/version'] as const;

/** `Authorization: Bearer <token>`. */
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A request to the admin port with `Host: 127.0.0.1:<port>` unless `host` says otherwise. */
function admin(
  port: number,
  path: string,
  options: { method?: string; host?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  return httpGet(port, path, { host: `127.0.0.1:${port}`, ...options });
}

/** A POST /reload as a well-behaved client sends it: JSON content type, own Host, plus `headers`. */
function reload(port: number, headers: Record<string, string> = {}, host?: string): Promise<HttpAnswer> {
  return admin(port, '/reload', { method: 'POST', headers: { ...JSON_TYPE, ...headers }, ...(host ? { host } : {}) });
}

function refusedWith(res: HttpAnswer, status: number, code: string): void {
  expect({ status: res.status, code: res.headers['x-switchboard-error'] }).toEqual({ status, code });
  expect(JSON.parse(res.body)).toMatchObject({ ok: false, error: code, message: expect.stringMatching(/^admin: /) });
}

/** Rewrites the config of the first describe's router with `admin` merged in, and reloads it. */
async function rewriteAdmin(router: TestRouter, admin: Record<string, unknown>): Promise<void> {
  const raw = {
    listeners: [{ name: 'web', address: '127.0.0.1:0' }],
    addressBook: { name: 'file', path: 'servers.yaml' },
    admin: { address: `127.0.0.1:${router.router.admin!.address().port}`, token: 's3cret', ...admin },
    limits: { drainTimeout: '1s' },
  };
  await writeFile(join(router.dir, 'switchboard.yaml'), stringify(raw));
  expect(await router.router.reload()).toMatchObject({ ok: true, changed: true });
}

/** The `switchboard_reloads_total` lines of /metrics (a refused POST must not change them). */
async function reloadCounts(port: number, token: Record<string, string>): Promise<string[]> {
  const text = (await admin(port, '/metrics', { headers: token })).body;
  return text.split('\n').filter((l) => l.startsWith('switchboard_reloads_total'));
}

/** Runs `body` with SWITCHBOARD_ADMIN_TOKEN unset, restoring it after. */
async function withoutEnvToken(body: () => Promise<void>): Promise<void> {
  const saved = process.env.SWITCHBOARD_ADMIN_TOKEN;
  delete process.env.SWITCHBOARD_ADMIN_TOKEN;
  try {
    await body();
  } finally {
    if (saved === undefined) delete process.env.SWITCHBOARD_ADMIN_TOKEN;
    else process.env.SWITCHBOARD_ADMIN_TOKEN = saved;
  }
}

describe('admin listener with a token', () => {
  let a: TestBackend;
  let router: TestRouter;
  let port: number;
  const token = bearer('s3cret');

  beforeAll(async () => {
    a = await startHttpBackend('a');
    router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '127.0.0.1:0', token: 's3cret' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*.example.test", backends: [${a.address}] }\n` }) },
    );
    port = router.router.admin!.address().port;
  });
  afterAll(async () => {
    await router.close();
    await a.close();
  });

  it('GET /healthz and /readyz answer 200 without the token, whatever the Host', async () => {
    for (const host of [`127.0.0.1:${port}`, 'evil.test']) {
      const healthz = await admin(port, '/healthz', { host });
      expect({ status: healthz.status, body: healthz.body }).toEqual({ status: 200, body: 'ok\n' });
      const readyz = await admin(port, '/readyz', { host });
      expect({ status: readyz.status, body: readyz.body }).toEqual({ status: 200, body: 'ready\n' });
    }
  });

  it.each(READS)(
    'GET %s needs the token: 401 without, with a wrong one or another scheme; 200 with it',
    async (path) => {
      const none = await admin(port, path);
      refusedWith(none, 401, 'unauthorized');
      expect(none.headers['www-authenticate']).toBe('Bearer realm="switchboard-admin"');
      refusedWith(await admin(port, path, { headers: bearer('wrong') }), 401, 'unauthorized');
      refusedWith(await admin(port, path, { headers: bearer('s3cre') }), 401, 'unauthorized');
      refusedWith(await admin(port, path, { headers: { authorization: 'Basic s3cret' } }), 401, 'unauthorized');
      expect((await admin(port, path, { headers: token })).status).toBe(200);
    },
  );

  it.each(READS)('GET %s with the token but a foreign Host (DNS rebinding) answers 403', async (path) => {
    refusedWith(await admin(port, path, { host: `evil.test:${port}`, headers: token }), 403, 'host_not_allowed');
  });

  it('GET /routes is the book routing table with the config version', async () => {
    const res = await admin(port, '/routes', { headers: token });
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as { version: string; routes: { host: string }[] };
    expect(body.version).toBe(router.router.runtime.engine.version);
    expect(body.routes).toEqual([expect.objectContaining({ host: '*.example.test' })]);
  });

  it('GET /backends lists registry state and health', async () => {
    const body = JSON.parse((await admin(port, '/backends', { headers: token })).body) as {
      backends: Record<string, unknown>[];
    };
    expect(body.backends).toEqual([
      expect.objectContaining({ id: a.address, available: true, active: 0, healthChecked: true }),
    ]);
  });

  it('GET /version names the config file', async () => {
    const body = JSON.parse((await admin(port, '/version', { headers: token })).body) as {
      file: string;
      version: string;
    };
    expect(body.file).toBe(join(router.dir, 'switchboard.yaml'));
    expect(body.version).toMatch(/^[0-9a-f]{12}@\d{4}-/);
  });

  it('POST /reload needs the bearer token: 401 without or with a wrong one', async () => {
    refusedWith(await reload(port), 401, 'unauthorized');
    refusedWith(await reload(port, bearer('wrong')), 401, 'unauthorized');
  });

  it('POST /reload refuses a foreign Host, a cross-site Origin and a browser-simple content type', async () => {
    const before = await reloadCounts(port, token);
    refusedWith(await reload(port, token, `evil.test:${port}`), 403, 'host_not_allowed');
    refusedWith(await reload(port, token, '127.0.0.1.evil.test'), 403, 'host_not_allowed');
    refusedWith(await reload(port, { ...token, origin: 'http://evil.test' }), 403, 'cross_origin');
    refusedWith(await reload(port, { ...token, origin: 'null' }), 403, 'cross_origin');
    refusedWith(await reload(port, { ...token, 'sec-fetch-site': 'cross-site' }), 403, 'cross_origin');
    refusedWith(await reload(port, { ...token, 'sec-fetch-site': 'same-site' }), 403, 'cross_origin');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      refusedWith(await reload(port, { ...token, 'content-type': type }), 415, 'unsupported_media_type');
    }
    const noType = await admin(port, '/reload', { method: 'POST', headers: token });
    refusedWith(noType, 415, 'unsupported_media_type');
    expect(await reloadCounts(port, token)).toEqual(before);
  });

  it('POST /reload with the token, own Host and JSON: 200, also with a same-origin Origin or localhost', async () => {
    const plain = await reload(port, token);
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toMatchObject({ ok: true, changed: false, trigger: 'api' });
    const sameOrigin = await reload(port, {
      ...token,
      'content-type': 'application/json; charset=utf-8',
      origin: `http://127.0.0.1:${port}`,
      'sec-fetch-site': 'same-origin',
    });
    expect(sameOrigin.status).toBe(200);
    expect((await reload(port, token, `localhost:${port}`)).status).toBe(200);
    expect((await reload(port, token, `[::1]:${port}`)).status).toBe(200);
  });

  it('POST /reload with the token: 200 unchanged, 200 changed, 422 with every error on a bad config', async () => {
    const file = join(router.dir, 'switchboard.yaml');
    const same = await reload(port, token);
    expect(same.status).toBe(200);
    expect(JSON.parse(same.body)).toMatchObject({ ok: true, changed: false });

    const config = router.router.runtime.engine.loaded.config;
    const raw = {
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: { name: 'file', path: 'servers.yaml' },
      admin: { address: `127.0.0.1:${config.admin!.address.port}`, token: 's3cret' },
      limits: { drainTimeout: '1s', idleTimeout: '5s' },
    };
    await writeFile(file, stringify(raw));
    const changed = await reload(port, token);
    expect(changed.status).toBe(200);
    expect(JSON.parse(changed.body)).toMatchObject({ ok: true, changed: true, trigger: 'api' });
    expect(router.router.runtime.engine.limits.idleTimeout).toBe(5000);

    const before = router.router.runtime.engine.version;
    await writeFile(
      file,
      stringify({ ...raw, listeners: [{ name: 'web', address: 'nowhere' }], routing: 'sometimes' }),
    );
    const bad = await reload(port, token);
    expect(bad.status).toBe(422);
    const body = JSON.parse(bad.body) as { ok: boolean; errors: string[]; version: string };
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

  it('a reload applies admin.open, admin.allowedHosts and a new token at once', async () => {
    refusedWith(await admin(port, '/metrics'), 401, 'unauthorized');
    refusedWith(await reload(port, token, `admin.internal:${port}`), 403, 'host_not_allowed');
    await rewriteAdmin(router, { open: ['/healthz', '/readyz', '/metrics'], allowedHosts: ['Admin.Internal'] });
    expect((await admin(port, '/metrics', { host: 'prometheus.scrapes.by.name:9901' })).status).toBe(200);
    refusedWith(await admin(port, '/routes'), 401, 'unauthorized');
    expect((await reload(port, token, `admin.internal:${port}`)).status).toBe(200);
    expect((await reload(port, token, 'ADMIN.internal')).status).toBe(200);

    await rewriteAdmin(router, { token: 'n3w' });
    refusedWith(await admin(port, '/routes', { headers: token }), 401, 'unauthorized');
    expect((await admin(port, '/routes', { headers: bearer('n3w') })).status).toBe(200);
  });

  it('unknown paths answer 404, known paths with another method 405', async () => {
    expect((await admin(port, '/nope')).status).toBe(404);
    expect((await admin(port, '/reload')).status).toBe(405);
    expect((await admin(port, '/metrics', { method: 'POST' })).status).toBe(405);
  });
});

describe('admin listener on loopback without a token', () => {
  it('serves reads and POST /reload to local clients, but refuses DNS rebinding, cross-site and simple POSTs', async () => {
    await withoutEnvToken(async () => {
      const dir = await tempDir({ 'servers.yaml': '- { host: "*", backends: [127.0.0.1:1] }\n' });
      const router = await startTestRouter(
        { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '127.0.0.1:0' } },
        { dir },
      );
      try {
        const port = router.router.admin!.address().port;
        for (const path of READS) {
          expect((await admin(port, path)).status).toBe(200);
          // A page on evil.test whose name now resolves to 127.0.0.1 reads nothing.
          refusedWith(await admin(port, path, { host: `evil.test:${port}` }), 403, 'host_not_allowed');
        }
        refusedWith(await reload(port, {}, `evil.test:${port}`), 403, 'host_not_allowed');
        refusedWith(await reload(port, { origin: 'http://evil.test' }), 403, 'cross_origin');
        refusedWith(await reload(port, { origin: `http://localhost:3000` }), 403, 'cross_origin');
        refusedWith(await reload(port, { 'sec-fetch-site': 'cross-site' }), 403, 'cross_origin');
        // What an HTML form or a no-cors fetch can send: a simple content type, or none.
        refusedWith(await reload(port, { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
        refusedWith(await admin(port, '/reload', { method: 'POST' }), 415, 'unsupported_media_type');
        expect((await reload(port)).status).toBe(200);
        expect((await reload(port, { 'sec-fetch-site': 'none' }, `localhost:${port}`)).status).toBe(200);
      } finally {
        await router.close();
      }
    });
  });
});

// The loopback judgement is about the bound address: 0.0.0.0 accepts connections from every
// interface, so it is a real non-loopback listener even though the test reaches it over 127.0.0.1
// (a client on 127.0.0.1 earns no trust: a local reverse proxy would look the same).
describe('admin listener off loopback without a token', () => {
  it('serves only the open paths, warns at start, and needs the env token for everything else', async () => {
    await withoutEnvToken(async () => {
      const lines: string[] = [];
      const dir = await tempDir({ 'servers.yaml': '- { host: "*", backends: [127.0.0.1:1] }\n' });
      const router = await startTestRouter(
        { addressBook: { name: 'file', path: 'servers.yaml' }, admin: { address: '0.0.0.0:0' } },
        { dir, runtime: { logger: createLogger('warn', { write: (s: string) => void lines.push(s) }) } },
      );
      try {
        const port = router.router.admin!.address().port;
        const warnings = lines
          .map((l) => JSON.parse(l) as { level: number; msg: string; admin: string; open: string[] })
          .filter((w) => w.msg.includes('admin listener is not on loopback and has no token'));
        expect(warnings).toEqual([
          expect.objectContaining({ level: 'warn', admin: `0.0.0.0:${port}`, open: ['/healthz', '/readyz'] }),
        ]);

        expect((await admin(port, '/healthz')).status).toBe(200);
        expect((await admin(port, '/readyz')).status).toBe(200);
        for (const path of READS) {
          const res = await admin(port, path);
          refusedWith(res, 401, 'unauthorized');
          expect(JSON.parse(res.body).message).toMatch(/no token is set .* is not loopback/);
        }
        refusedWith(await reload(port), 401, 'unauthorized');

        process.env.SWITCHBOARD_ADMIN_TOKEN = 'from-env';
        for (const path of READS) expect((await admin(port, path, { headers: bearer('from-env') })).status).toBe(200);
        refusedWith(await admin(port, '/routes', { headers: bearer('other') }), 401, 'unauthorized');
        refusedWith(
          await reload(port, { ...bearer('from-env'), 'content-type': 'text/plain' }),
          415,
          'unsupported_media_type',
        );
        expect((await reload(port, bearer('from-env'))).status).toBe(200);
      } finally {
        await router.close();
      }
    });
  });

  it('admin.open lists the reads served to anyone (a Prometheus scrape without a token)', async () => {
    await withoutEnvToken(async () => {
      const dir = await tempDir({ 'servers.yaml': '- { host: "*", backends: [127.0.0.1:1] }\n' });
      const router = await startTestRouter(
        {
          addressBook: { name: 'file', path: 'servers.yaml' },
          admin: { address: '0.0.0.0:0', open: ['/healthz', '/metrics'] },
        },
        { dir },
      );
      try {
        const port = router.router.admin!.address().port;
        expect((await admin(port, '/metrics', { host: 'switchboard.monitoring.svc:9901' })).status).toBe(200);
        expect((await admin(port, '/healthz')).status).toBe(200);
        refusedWith(await admin(port, '/readyz'), 401, 'unauthorized');
        refusedWith(await admin(port, '/routes'), 401, 'unauthorized');
      } finally {
        await router.close();
      }
    });
  });
});
