/**
 * Path rules cannot be bypassed by spelling the path differently (issue 17 item 4). A `/admin/*`
 * rule sends to a blackhole; every spelling a backend resolves to `/admin/secret` (merged
 * slashes, `%2F`, encoded unreserved characters, dot-segments) must get the blackhole (503) or a
 * refusal (400), on every panel and in both routing modes:
 *
 *   client ──raw bytes──► net panel (per-request | per-connection) ─┐
 *   client ──h2c────────► net panel (first HEADERS) ───────────────┼─► /admin/* → GSLB_BLACKHOLE
 *   client ──h2 / 1.1───► http2 panel ─────────────────────────────┘   else    → web
 *
 * Then with real nginx behind the router (merge_slashes on, %2F decoded, as shipped): for each
 * spelling, the cluster routing picked agrees with the `$uri` nginx acted on. The listener's
 * `pathNormalization` switches are checked too (keep: literal, reject: 400).
 */
import { connect as h2connect } from 'node:http2';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { freePort } from '../harness/haproxy.ts';
import { type Nginx, nginxAvailable, startNginx } from '../harness/nginx.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { h2Request } from './http2-helpers.ts';

/** Spellings of `/admin/secret` that nginx (and RFC 3986 §5.2.4) resolve to it. */
const ADMIN_SPELLINGS = [
  '//admin/secret',
  '/admin%2Fsecret',
  '/admin%2fsecret',
  '/%61dmin/secret',
  '/./admin/secret',
  '/x/../admin/secret',
  '/x%2F..%2Fadmin/secret',
  '/%2Fadmin/secret',
  '/admin//secret',
  '/%2e/admin/secret',
];

/** Refused outright by the default listener (400). */
const REFUSED_SPELLINGS = ['/admin%5Csecret', '/..//admin/secret'];

/** One request over a fresh connection: status line code and body. */
function rawRequest(port: number, bytes: string): Promise<{ status: number; body: string; text: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    s.on('connect', () => s.write(Buffer.from(bytes, 'latin1')));
    s.on('data', (c) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4), text });
    });
    s.setTimeout(5000, () => s.destroy());
  });
}

const get = (target: string, host = 'site.test') =>
  `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

/** The bfe book: `/admin/*` → `admin`, everything else → `web`. */
function book(admin: object, webAddress: string) {
  return {
    name: 'bfe',
    products: {
      site: {
        hosts: ['site.test'],
        basicRules: [
          { hosts: ['site.test'], paths: ['/admin/*'], cluster: 'admin' },
          { hosts: ['site.test'], cluster: 'web' },
        ],
      },
    },
    clusters: {
      admin,
      web: { subclusters: { s1: { weight: 1, backends: [{ address: webAddress }] } } },
    },
  };
}

const BLACKHOLE = { subclusters: { GSLB_BLACKHOLE: { weight: 1 } } };

const LISTENERS = [
  { name: 'main', address: '127.0.0.1:0' },
  { name: 'keep', address: '127.0.0.1:0', pathNormalization: { mergeSlashes: false, escapedSlashes: 'keep' } },
  { name: 'reject', address: '127.0.0.1:0', pathNormalization: { escapedSlashes: 'reject' } },
];

describe.each(['per-request', 'per-connection'])('net panel, routing %s: /admin/* → blackhole', (routing) => {
  let web: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    web = await startHttpBackend('web');
    router = await startTestRouter({ routing, listeners: LISTENERS, addressBook: book(BLACKHOLE, web.address) });
  });
  afterAll(async () => {
    await router.close();
    await web.close();
  });

  it.each(ADMIN_SPELLINGS)('%s gets the blackhole (503), nothing reaches the backend', async (target) => {
    const hits = web.hits;
    const r = await rawRequest(router.port('main'), get(target));
    expect(r.status).toBe(503);
    expect(r.text).toContain('X-Switchboard-Error: blackhole');
    expect(web.hits).toBe(hits);
  });

  it.each(REFUSED_SPELLINGS)('%s is refused (400)', async (target) => {
    const r = await rawRequest(router.port('main'), get(target));
    expect(r.status).toBe(400);
  });

  it.each(['/', '/public/x', '/administrator', '/a//b', '/a%2Fb'])('%s reaches the web cluster', async (target) => {
    const r = await rawRequest(router.port('main'), get(target));
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ backend: 'web', url: target });
  });

  it('keep listener: slashes and %2F stay literal for matching, the target is forwarded as sent', async () => {
    for (const target of ['//admin/secret', '/admin%2Fsecret']) {
      const r = await rawRequest(router.port('keep'), get(target));
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ backend: 'web', url: target });
    }
    expect((await rawRequest(router.port('keep'), get('/x/../admin/secret'))).status).toBe(503);
  });

  it('reject listener: %2F is refused (400), merged slashes still match', async () => {
    expect((await rawRequest(router.port('reject'), get('/admin%2Fsecret'))).status).toBe(400);
    expect((await rawRequest(router.port('reject'), get('/public%2fx'))).status).toBe(400);
    expect((await rawRequest(router.port('reject'), get('//admin/secret'))).status).toBe(503);
  });

  it('the access log records the normalised path', async () => {
    await rawRequest(router.port('main'), get('/x/..//admin%2Fsecret%2D%6Cog'));
    // A path no other test sends, so a late line of another test cannot be taken for it.
    const line = () => router.access.find((a) => a.path === '/admin/secret-log');
    await eventually(() => line() !== undefined);
    expect(line()).toMatchObject({ result: 'blackhole', status: 503 });
  });

  it('h2c prior knowledge: the first HEADERS :path is normalised the same way', async () => {
    for (const path of ['//admin/secret', '/admin%2Fsecret', '/x/../admin/secret']) {
      const before = router.access.length;
      const session = h2connect(`http://127.0.0.1:${router.port('main')}`);
      session.on('error', () => {});
      // The blackhole answers an h2c connection with a GOAWAY: the stream fails.
      await h2Request(session, { ':path': path, ':authority': 'site.test' }).then(
        () => undefined,
        () => undefined,
      );
      session.destroy();
      // Lines of earlier tests may still arrive (logged at close): pick this connection's.
      const h2c = () => router.access.slice(before).find((a) => a.protocol === 'h2c');
      await eventually(() => h2c() !== undefined);
      expect(h2c()).toMatchObject({
        protocol: 'h2c',
        path: '/admin/secret',
        result: 'blackhole',
      });
    }
  });
});

describe('net panel, routing per-request: later requests on a connection', () => {
  let web: TestBackend;
  let perRequest: TestRouter;

  beforeAll(async () => {
    web = await startHttpBackend('web');
    perRequest = await startTestRouter({ listeners: LISTENERS, addressBook: book(BLACKHOLE, web.address) });
  });
  afterAll(async () => {
    await perRequest.close();
    await web.close();
  });

  it('per-request: a later request on a kept-alive connection is judged the same way', async () => {
    const hits = web.hits;
    const r = await rawRequest(
      perRequest.port('main'),
      `GET /public HTTP/1.1\r\nHost: site.test\r\n\r\n${get('//admin%2Fsecret')}`,
    );
    expect(r.text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(web.hits).toBe(hits + 1);
  });
});

describe('http2 panel: /admin/* → blackhole', () => {
  let web: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    web = await startHttpBackend('web');
    router = await startTestRouter({ panel: 'http2', listeners: LISTENERS, addressBook: book(BLACKHOLE, web.address) });
  });
  afterAll(async () => {
    await router.close();
    await web.close();
  });

  it('HTTP/2: every spelling gets 503 blackhole or 400; plain paths reach web', async () => {
    const session = h2connect(`http://127.0.0.1:${router.port('main')}`);
    try {
      for (const path of ADMIN_SPELLINGS) {
        const r = await h2Request(session, { ':path': path, ':authority': 'site.test' });
        expect([path, r.status, r.headers['x-switchboard-error']]).toEqual([path, 503, 'blackhole']);
      }
      for (const path of REFUSED_SPELLINGS) {
        const r = await h2Request(session, { ':path': path, ':authority': 'site.test' });
        expect([path, r.status]).toEqual([path, 400]);
      }
      const ok = await h2Request(session, { ':path': '/a%2Fb', ':authority': 'site.test' });
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body.toString())).toMatchObject({ backend: 'web', url: '/a%2Fb' });
    } finally {
      session.close();
    }
    const keep = h2connect(`http://127.0.0.1:${router.port('keep')}`);
    try {
      const r = await h2Request(keep, { ':path': '/admin%2Fsecret', ':authority': 'site.test' });
      expect(r.status).toBe(200);
    } finally {
      keep.close();
    }
  });

  it('HTTP/1.1 on the same port: the same verdicts', async () => {
    for (const target of ADMIN_SPELLINGS) {
      const r = await rawRequest(router.port('main'), get(target));
      expect([target, r.status]).toEqual([target, 503]);
    }
  });
});

describe.skipIf(!nginxAvailable())('nginx behind the router: routing decides on the path nginx acts on', () => {
  let nginx: Nginx;
  let router: TestRouter;
  let adminPort = 0;
  let webPort = 0;

  beforeAll(async () => {
    adminPort = await freePort();
    webPort = await freePort();
    // Both answer with the cluster they stand for and nginx's own normalised $uri.
    const server = (port: number, name: string) =>
      `server { listen 127.0.0.1:${port}; location / { default_type text/plain; return 200 "${name} $uri"; } }`;
    nginx = await startNginx([server(adminPort, 'admin'), server(webPort, 'web')].join('\n'), [adminPort, webPort]);
    router = await startTestRouter({
      listeners: LISTENERS,
      addressBook: book(
        { subclusters: { s1: { weight: 1, backends: [{ address: `127.0.0.1:${adminPort}` }] } } },
        `127.0.0.1:${webPort}`,
      ),
    });
  });
  afterAll(async () => {
    await router?.close();
    await nginx?.close();
  });

  it.each([...ADMIN_SPELLINGS, '/public//x', '/a%2Fb', '/administrator', '/%2e%2e%2fadmin'])(
    '%s: nginx alone resolves it, and through the router it lands in the cluster that owns that path',
    async (target) => {
      const direct = await rawRequest(webPort, get(target));
      const through = await rawRequest(router.port('main'), get(target));
      if (direct.status !== 200) {
        // nginx refuses it (400): so does the router.
        expect([target, through.status]).toEqual([target, 400]);
        return;
      }
      const uri = direct.body.slice('web '.length);
      expect(through.status).toBe(200);
      const [cluster, seen] = through.body.split(' ');
      expect(seen).toBe(uri);
      expect([target, cluster]).toEqual([target, uri.startsWith('/admin/') ? 'admin' : 'web']);
    },
  );

  it('nginx resolves every bypass spelling to /admin/secret', async () => {
    for (const target of ADMIN_SPELLINGS) {
      expect((await rawRequest(webPort, get(target))).body).toBe('web /admin/secret');
    }
  });
});
