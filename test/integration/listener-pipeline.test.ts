/**
 * The listener pipeline (src/listener/), the same on every panel: mutual TLS, PROXY header in
 * from trusted and untrusted peers (also before a TLS handshake), the three caps (counted once
 * across worker threads), the http2 panel's header list bound and stream limit, listener reload
 * on the http2 panel, and connect-then-reset storms on a terminating listener leaking no slot
 * (including peers whose reset the router sees before it accepts them).
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { connect as h2Connect, type Settings } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { acceptedSockets } from '../adversarial/leaks.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { h2Request } from './http2-helpers.ts';

const PANELS = ['net', 'http2'] as const;
const cluster = (address: string) => ({ subclusters: { s: { weight: 1, backends: [{ address }] } } });
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n`;
/** Child script: connect `n` sockets to `port`, then reset all of them (RST, SO_LINGER 0) and exit. */
const RESET_STORM = `
const net = require('node:net');
const [port, n] = process.argv.slice(1).map(Number);
const socks = [];
let connected = 0;
let closed = 0;
for (let i = 0; i < n; i++) {
  const s = net.connect({ port, host: '127.0.0.1' });
  s.on('error', () => {});
  s.on('close', () => { if (++closed === n) process.exit(0); });
  s.once('connect', () => { if (++connected === n) for (const x of socks) x.resetAndDestroy(); });
  socks.push(s);
}
`;
const proxyV1 = (src: string) => `PROXY TCP4 ${src} 198.51.100.1 40000 443\r\n`;

interface Exchange {
  readonly tls?: { readonly ca: string; readonly client?: CertPair };
  readonly proxy?: string;
  readonly localAddress?: string;
}

/** One HTTP/1.1 request (optionally after a PROXY header, optionally over TLS); the whole reply. */
function exchange(port: number, send: string, how: Exchange = {}): Promise<string> {
  return new Promise((resolve) => {
    const raw = connect({ port, host: '127.0.0.1', ...(how.localAddress ? { localAddress: how.localAddress } : {}) });
    let data = '';
    const timer = setTimeout(() => raw.destroy(), 5_000);
    const finish = () => {
      clearTimeout(timer);
      resolve(data);
    };
    raw.on('error', () => {});
    // Refused, or closed before TLS started: the reply is what came so far (nothing).
    let tls = false;
    raw.once('close', () => {
      if (!tls) finish();
    });
    raw.once('connect', () => {
      if (how.proxy !== undefined) raw.write(how.proxy);
      if (how.tls === undefined) {
        raw.on('data', (c: Buffer) => (data += c.toString('latin1')));
        raw.write(send);
        return;
      }
      tls = true;
      const s = tlsConnect({
        socket: raw,
        servername: 'www.example.test',
        ca: how.tls.ca,
        ALPNProtocols: ['http/1.1'],
        ...(how.tls.client ? { cert: how.tls.client.certPem, key: how.tls.client.keyPem } : {}),
      });
      s.on('error', () => {});
      s.on('secureConnect', () => s.write(send));
      s.on('data', (c: Buffer) => (data += c.toString('latin1')));
      s.on('close', finish);
    });
  });
}

function bodyOf(data: string): Record<string, unknown> {
  const i = data.indexOf('\r\n\r\n');
  return i < 0 ? {} : (JSON.parse(data.slice(i + 4)) as Record<string, unknown>);
}

/** A connection that sends nothing and stays open until closed (or the router closes it). */
function hold(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) }, () => resolve(s));
    s.once('error', reject);
  });
}

const count = (r: TestRouter, result: string, listener?: string) =>
  r.access.filter((a) => a.result === result && (listener === undefined || a.listener === listener)).length;

describe.each(PANELS)('listener pipeline on the %s panel', (panel) => {
  let pki: Pki;
  let alice: CertPair;
  const b: Record<string, TestBackend> = {};
  let router: TestRouter;
  const hits = () => Object.values(b).reduce((n, x) => n + x.hits, 0);

  beforeAll(async () => {
    pki = await createPki();
    await pki.leaf('www', { dns: ['www.example.test'] });
    alice = await pki.leaf('alice', { cn: 'alice' });
    for (const n of ['web', 'authed', 'proxied']) b[n] = await startHttpBackend(n);
    const certificates = [{ cert: 'www.crt', key: 'www.key' }];
    router = await startTestRouter(
      {
        panel,
        listeners: [
          { name: 'plain', address: '127.0.0.1:0' },
          { name: 'mtls', address: '127.0.0.1:0', tls: 'terminate', certificates, clientAuth: { ca: 'ca.crt' } },
          { name: 'pp', address: '127.0.0.1:0', proxyProtocol: 'v1', trustedSources: ['127.0.0.0/8'] },
          {
            name: 'pptls',
            address: '127.0.0.1:0',
            proxyProtocol: 'v1',
            trustedSources: ['127.0.0.0/8'],
            tls: 'terminate',
            certificates,
          },
          { name: 'untrusted', address: '127.0.0.1:0', proxyProtocol: 'v1', trustedSources: ['10.0.0.0/8'] },
          { name: 'capped', address: '127.0.0.1:0', maxConnections: 2 },
          { name: 'storm', address: '127.0.0.1:0', tls: 'terminate', certificates, maxConnections: 64 },
        ],
        addressBook: {
          name: 'bfe',
          products: {
            www: {
              hosts: ['www.example.test'],
              rules: [
                { cond: 'ses_tls_client_auth()', cluster: 'authed' },
                { cond: 'req_cip_range("203.0.113.0", "203.0.113.255") && req_cip_trusted()', cluster: 'proxied' },
                { cond: 'default_t()', cluster: 'web' },
              ],
            },
          },
          clusters: Object.fromEntries(Object.entries(b).map(([n, x]) => [n, cluster(x.address)])),
        },
      },
      { dir: pki.dir },
    );
  });
  afterAll(async () => {
    await router.close();
    await Promise.all(Object.values(b).map((x) => x.close()));
    await pki.close();
  });

  it('clientAuth required: a client without a certificate is refused before any backend', async () => {
    const before = hits();
    const seen = router.access.length;
    const reply = await exchange(router.port('mtls'), get('/'), { tls: { ca: pki.ca.certPem } });
    expect(reply).toBe('');
    await eventually(() =>
      router.access.slice(seen).some((r) => r.listener === 'mtls' && r.reason === 'client_certificate_required'),
    );
    expect(hits()).toBe(before);
  });

  it('clientAuth required: a client with a certificate from the CA is served, client auth known to routing', async () => {
    const reply = await exchange(router.port('mtls'), get('/'), { tls: { ca: pki.ca.certPem, client: alice } });
    expect(statusOf(Buffer.from(reply))).toBe(200);
    expect(bodyOf(reply)).toMatchObject({ backend: 'authed' });
  });

  it('PROXY from a trusted peer: the client address is the header source', async () => {
    const reply = await exchange(router.port('pp'), get('/pp'), { proxy: proxyV1('203.0.113.7') });
    expect(bodyOf(reply)).toMatchObject({ backend: 'proxied', url: '/pp' });
    if (panel === 'net') expect(router.access.some((r) => r.client === '203.0.113.7:40000')).toBe(true);
  });

  it('PROXY before a TLS handshake (proxyProtocol with tls: terminate)', async () => {
    const reply = await exchange(router.port('pptls'), get('/pptls'), {
      proxy: proxyV1('203.0.113.8'),
      tls: { ca: pki.ca.certPem },
    });
    expect(bodyOf(reply)).toMatchObject({ backend: 'proxied', url: '/pptls' });
  });

  it('PROXY listener: a peer outside trustedSources is closed, logged proxy_rejected', async () => {
    const before = hits();
    const reply = await exchange(router.port('untrusted'), get('/x'), { proxy: proxyV1('203.0.113.9') });
    expect(reply).toBe('');
    await eventually(() => count(router, 'proxy_rejected', 'untrusted') >= 1);
    expect(hits()).toBe(before);
  });

  it('listener maxConnections: the third connection is closed (overloaded), a place freed serves again', async () => {
    const port = router.port('capped');
    const held = [await hold(port), await hold(port)];
    expect(await exchange(port, get('/'))).toBe('');
    await eventually(() => count(router, 'overloaded', 'capped') >= 1);
    for (const s of held) s.destroy();
    await eventually(async () => statusOf(Buffer.from(await exchange(port, get('/')))) === 200);
  });

  it('a storm of connect-then-reset on a terminating listener leaks no admission slot', async () => {
    const port = router.port('storm');
    const storm: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      storm.push(
        new Promise<void>((resolve) => {
          const s = connect({ port, host: '127.0.0.1' });
          s.on('error', () => resolve());
          s.on('close', () => resolve());
          s.once('connect', () => s.resetAndDestroy());
        }),
      );
    }
    await Promise.all(storm);
    await eventually(() => (router.router.panel as unknown as { connections: number }).connections === 0);
    const reply = await exchange(port, get('/after'), { tls: { ca: pki.ca.certPem } });
    expect(bodyOf(reply)).toMatchObject({ backend: 'web', url: '/after' });
  });

  it('peers that reset before the accept (no remote address) leak no slot, round after round', async () => {
    // The failure of issue 17 item 3: pending handshakes keyed by `remoteAddress|remotePort`,
    // `undefined|undefined` for a peer whose RST arrived before accept(), so two such peers
    // shared a key and the first one's slot was never given back. Made deterministic: a child
    // process connects every socket and resets it (SO_LINGER 0) while this event loop is
    // blocked in spawnSync, so the router accepts only connections that are already reset.
    const port = router.port('storm');
    const overloaded = count(router, 'overloaded', 'storm');
    const watch = acceptedSockets();
    try {
      for (let round = 0; round < 3; round++) {
        const seen = watch.sockets.length;
        const child = spawnSync(process.execPath, ['-e', RESET_STORM, String(port), '60'], { timeout: 20_000 });
        expect(child.status).toBe(0);
        // All 60 fit the listener's 64 slots only if the earlier rounds gave theirs back.
        await eventually(() => watch.sockets.length - seen === 60, 10_000, `round ${round}: 60 accepted`);
        await eventually(() => (router.router.panel as unknown as { connections: number }).connections === 0);
      }
      // The storm did reach the failure mode: accepted sockets without a peer address.
      expect(watch.sockets.filter((s) => s.remoteAddress === undefined).length).toBeGreaterThanOrEqual(2);
      expect(count(router, 'overloaded', 'storm')).toBe(overloaded);
    } finally {
      watch.stop();
    }
    const reply = await exchange(port, get('/after-rst'), { tls: { ca: pki.ca.certPem } });
    expect(bodyOf(reply)).toMatchObject({ backend: 'web', url: '/after-rst' });
  });
});

describe.each(PANELS)('global and per-client caps on the %s panel', (panel) => {
  let backend: TestBackend;
  beforeAll(async () => {
    backend = await startHttpBackend('web');
  });
  afterAll(() => backend.close());
  const book = () => ({
    name: 'bfe',
    products: { www: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
    clusters: { web: cluster(backend.address) },
  });

  it('limits.maxConnections counts every listener together', async () => {
    const r = await startTestRouter({
      panel,
      listeners: [
        { name: 'a', address: '127.0.0.1:0' },
        { name: 'b', address: '127.0.0.1:0' },
      ],
      limits: { maxConnections: 2 },
      addressBook: book(),
    });
    try {
      const held = [await hold(r.port('a')), await hold(r.port('b'))];
      expect(await exchange(r.port('b'), get('/'))).toBe('');
      await eventually(() => count(r, 'overloaded') >= 1);
      for (const s of held) s.destroy();
      await eventually(async () => statusOf(Buffer.from(await exchange(r.port('a'), get('/')))) === 200);
    } finally {
      await r.close();
    }
  });

  it('limits.maxConnectionsPerClient caps one peer address, not the others', async () => {
    const r = await startTestRouter({ panel, limits: { maxConnectionsPerClient: 2 }, addressBook: book() });
    try {
      const held = [await hold(r.port()), await hold(r.port())];
      expect(await exchange(r.port(), get('/'))).toBe('');
      await eventually(() => count(r, 'overloaded') >= 1);
      const other = await exchange(r.port(), get('/'), { localAddress: '127.0.0.2' });
      expect(statusOf(Buffer.from(other))).toBe(200);
      for (const s of held) s.destroy();
    } finally {
      await r.close();
    }
  });
});

describe.each(['net', 'http2'])(
  'caps under panel: worker (2 threads, engine %s) are counted once for the process',
  (engine) => {
    let backend: TestBackend;
    beforeAll(async () => {
      backend = await startHttpBackend('web');
    });
    afterAll(() => backend.close());

    it.each([
      ['limits.maxConnections', { limits: { maxConnections: 4 } }, {}],
      ['listener maxConnections', {}, { maxConnections: 4 }],
      ['limits.maxConnectionsPerClient', { limits: { maxConnectionsPerClient: 4 } }, {}],
    ])('%s: 4 held across both threads, not 4 per thread', async (_name, top, listener) => {
      const r = await startTestRouter({
        panel: { name: 'worker', threads: 2, engine },
        listeners: [{ name: 'web', address: '127.0.0.1:0', ...listener }],
        ...top,
        addressBook: {
          name: 'bfe',
          products: { www: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
          clusters: { web: cluster(backend.address) },
        },
      });
      try {
        const sockets: Socket[] = [];
        for (let i = 0; i < 10; i++) {
          const s = await hold(r.port());
          s.on('error', () => {});
          sockets.push(s);
        }
        // Whatever thread the kernel gave each one, exactly 6 are refused and 4 stay open.
        await eventually(() => count(r, 'overloaded') === 6);
        await eventually(() => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length <= 4);
        expect(count(r, 'overloaded')).toBe(6);
        for (const s of sockets) s.destroy();
        await eventually(async () => statusOf(Buffer.from(await exchange(r.port(), get('/')))) === 200);
      } finally {
        await r.close();
      }
    });
  },
);

describe('http2 panel: streams and header lists', () => {
  let backend: TestBackend;
  let router: TestRouter;
  beforeAll(async () => {
    backend = await startHttpBackend('web');
    router = await startTestRouter({
      panel: 'http2',
      limits: { maxConcurrentStreams: 7 },
      addressBook: {
        name: 'bfe',
        products: { www: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
        clusters: { web: cluster(backend.address) },
      },
    });
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('advertises limits.maxConcurrentStreams in its SETTINGS', async () => {
    const session = h2Connect(`http://127.0.0.1:${router.port()}`);
    session.on('error', () => {});
    const settings = await new Promise<Settings>((resolve) => session.once('remoteSettings', resolve));
    session.close();
    expect(settings.maxConcurrentStreams).toBe(7);
    expect(settings.maxHeaderListSize).toBe(16_384);
  });

  it('an h2 header list over maxHeaderBytes is answered 431 and never reaches the backend', async () => {
    const before = backend.hits;
    const session = h2Connect(`http://127.0.0.1:${router.port()}`);
    session.on('error', () => {});
    const big = await h2Request(session, { ':path': '/big', host: 'www.example.test', 'x-big': 'a'.repeat(20_000) });
    const small = await h2Request(session, { ':path': '/small', host: 'www.example.test' });
    session.close();
    expect(big.status).toBe(431);
    expect(small.status).toBe(200);
    expect(backend.hits).toBe(before + 1);
  });

  it('an HTTP/1.1 head over maxHeaderBytes on the fallback server is answered 431', async () => {
    const before = backend.hits;
    const reply = await exchange(
      router.port(),
      `GET / HTTP/1.1\r\nHost: www.example.test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(statusOf(Buffer.from(reply))).toBe(431);
    expect(backend.hits).toBe(before);
  });

  it('the default is 100 streams', async () => {
    const r = await startTestRouter({
      panel: 'http2',
      addressBook: {
        name: 'bfe',
        products: { www: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
        clusters: { web: cluster(backend.address) },
      },
    });
    try {
      const session = h2Connect(`http://127.0.0.1:${r.port()}`);
      session.on('error', () => {});
      const settings = await new Promise<Settings>((resolve) => session.once('remoteSettings', resolve));
      session.close();
      expect(settings.maxConcurrentStreams).toBe(100);
    } finally {
      await r.close();
    }
  });
});

describe('http2 panel: listener reload', () => {
  it('a reload adding a listener binds it and serves on it; removing it stops accepting', async () => {
    const backend = await startHttpBackend('web');
    const base = {
      panel: 'http2',
      addressBook: {
        name: 'bfe',
        products: { www: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
        clusters: { web: cluster(backend.address) },
      },
      limits: { drainTimeout: '1s' },
    };
    const r = await startTestRouter(base);
    try {
      const first = { name: 'web', address: `127.0.0.1:${r.port('web')}` };
      await writeFile(
        join(r.dir, 'switchboard.yaml'),
        stringify({ ...base, listeners: [first, { name: 'added', address: '127.0.0.1:0' }] }),
      );
      expect(await r.router.reload()).toMatchObject({ ok: true, changed: true });
      const added = r.port('added');
      expect(statusOf(Buffer.from(await exchange(added, get('/added'))))).toBe(200);
      expect(statusOf(Buffer.from(await exchange(r.port('web'), get('/web'))))).toBe(200);
      await writeFile(join(r.dir, 'switchboard.yaml'), stringify({ ...base, listeners: [first] }));
      expect(await r.router.reload()).toMatchObject({ ok: true, changed: true });
      expect(Object.keys(r.router.panel.addresses())).toEqual(['web']);
      expect(await exchange(added, get('/gone'))).toBe('');
      console.log('after gone');
    } finally {
      await r.close();
      await backend.close();
    }
  });
});
