/**
 * The panel conformance suite (STYLE §17b): one table of listener and cluster scenarios, run
 * against every panel (`net`, `net` with `routing: per-connection`, `http2`, `worker` running
 * `net`, `worker` running `http2`: PANELS in panel-under-test.ts). The `net` panel's behaviour
 * is the reference; every other panel must behave the same, or refuse the option at config load
 * with a message naming the option and the panel (DESIGN "Two pipelines, every panel"). Where
 * panels differ by design (per-connection routing reads no response, so it has no status to
 * log or count), a scenario asks `routesPerConnection(p)` or `runsHttp2(p)`; a scenario whose
 * promise does not apply and has no config key to refuse names why in `notFor`. Each panel's
 * test file is one call to `panelConformance(panel)`.
 *
 * Every scenario starts real backends and a real router (test/harness/router.ts), sends real
 * bytes with real clients (node:net, node:tls, node:http, node:http2), and closes all it opened.
 * A scenario is a few seconds at most: client waits are bounded and deadlines are polled.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { writeFile } from 'node:fs/promises';
import { connect as h2Connect } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type PeerCertificate, connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ConfigError } from '../../src/config/errors.ts';
import { block, goawayCode, headers, prelude } from '../fixtures/h2/build.ts';
import {
  closedPort,
  startHttpBackend,
  startTcpBackend,
  type TcpBackend,
  type TestBackend,
} from '../harness/backend.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { httpGet } from '../harness/http.ts';
import { parsePrometheus, sum } from '../harness/prometheus.ts';
import { eventually, LISTEN, startTestRouter, type TestRouter } from '../harness/router.ts';
import { startTlsBackend, tlsRequest } from '../harness/tls-backend.ts';
import { backendControlScenarios } from './panel-backend-control.ts';
import {
  http2Name,
  type PanelUnderTest,
  panelKeys,
  routesPerConnection,
  runsHttp2,
  type Scenario,
} from './panel-under-test.ts';
import { capsScenarios } from './scenarios-caps.ts';
import { h2cRouteScenarios } from './scenarios-h2c-route.ts';
import { h2cUpgradeScenarios } from './scenarios-h2c-upgrade.ts';
import { headerCountScenarios } from './scenarios-header-count.ts';
import { keepAliveScenarios } from './scenarios-keep-alive.ts';
import { policyScenarios } from './scenarios-policies.ts';
import { requestPolicyScenarios } from './scenarios-policies-request.ts';

export { PANELS, type PanelUnderTest, type Scenario } from './panel-under-test.ts';

// ---------------------------------------------------------------------------------------------
// Helpers shared by the scenarios.

const HOST = 'www.example.test';
const get = (path = '/', extra = '') => `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n${extra}Connection: close\r\n\r\n`;

/** A bfe address book: every host to cluster `c` (plus other clusters when given). */
function book(c: Record<string, unknown>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'bfe',
    products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
    clusters: { c, ...more },
  };
}

/** A cluster of `addresses` in one sub-cluster (policy keys beside). */
function cluster(addresses: readonly string[], policy: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...policy, subclusters: { s1: { weight: 1, backends: addresses.map((address) => ({ address })) } } };
}

/** The full config of a scenario for panel `p`. */
function configFor(p: PanelUnderTest, config: Record<string, unknown>): Record<string, unknown> {
  return { ...panelKeys(p), ...config };
}

/** Starts the router; the scenario body runs; everything closes whatever happened. */
async function withRouter(
  p: PanelUnderTest,
  config: Record<string, unknown>,
  body: (r: TestRouter) => Promise<void>,
  dir?: string,
): Promise<void> {
  const r = await startTestRouter(configFor(p, config), dir === undefined ? {} : { dir });
  try {
    await body(r);
  } finally {
    await r.close();
  }
}

/** Closes every backend given, ignoring undefined ones. */
async function closeAll(...items: ({ close(): Promise<void> } | undefined)[]): Promise<void> {
  await Promise.all(items.map((x) => x?.close()));
}

/** A raw TCP backend answering every connection's first bytes with `200 ok` (and recording them). */
function okTcpBackend(name: string): Promise<TcpBackend> {
  return startTcpBackend(name, (socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
  });
}

/** Whether a socket to `port` is closed by the router within `ms`, having received no byte. */
function closedUnanswered(port: number, send: string | undefined, ms = 4_000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ port, host: '127.0.0.1' });
    let got = 0;
    const timer = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, ms);
    s.on('connect', () => {
      if (send !== undefined) s.write(send);
    });
    s.on('data', (d) => (got += d.length));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve(got === 0);
    });
  });
}

/**
 * A keep-alive HTTP/1.1 connection that completed one request (so the router has accepted and
 * counted it), then stays open until `close`.
 */
async function heldConnection(port: number): Promise<Socket> {
  const s = netConnect({ port, host: '127.0.0.1' });
  s.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('held connection: no answer')), 4_000);
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (/\r\n\r\n[\s\S]*"backend"/.test(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    s.once('close', () => reject(new Error('held connection closed by the router')));
    s.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`);
  });
  return s;
}

/** One h2c request on a fresh session: the status, or the error that ended the stream. */
function h2cRequest(
  port: number,
  headers: Record<string, string>,
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const session = h2Connect(`http://127.0.0.1:${port}`);
    const timer = setTimeout(() => {
      session.destroy();
      resolve({ error: 'timeout' });
    }, 4_000);
    const done = (v: { status: number; body: string } | { error: string }) => {
      clearTimeout(timer);
      session.destroy();
      resolve(v);
    };
    session.on('error', (e) => done({ error: e.message }));
    session.on('close', () => done({ error: 'session closed' }));
    const stream = session.request({ ':path': '/', ':authority': HOST, ...headers });
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (body += c));
    stream.on('error', (e) => done({ error: e.message }));
    stream.on('close', () =>
      status === 0 ? done({ error: `stream closed (${stream.rstCode})` }) : done({ status, body }),
    );
  });
}

/** The certificate CN a TLS listener serves for `servername`. */
function servedCn(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ port, host: '127.0.0.1', ca, servername: HOST });
    s.on('secureConnect', () => {
      const cert: PeerCertificate = s.getPeerCertificate();
      s.destroy();
      resolve(String(cert.subject.CN));
    });
    s.on('error', reject);
  });
}

/** The JSON body of a raw HTTP/1 response text. */
function bodyOf(data: string): Record<string, unknown> | undefined {
  const i = data.indexOf('\r\n\r\n');
  try {
    return JSON.parse(data.slice(i + 4)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Rewrites the router's config file with `config` (the harness defaults added) and reloads. */
async function reloadWith(r: TestRouter, p: PanelUnderTest, config: Record<string, unknown>) {
  const full = {
    listeners: LISTEN,
    ...configFor(p, config),
    limits: { drainTimeout: '1s', ...(config.limits as object | undefined) },
  };
  await writeFile(join(r.dir, 'switchboard.yaml'), stringify(full));
  return r.router.reload();
}

/** Shared PKI for the TLS scenarios (made once per file: openssl takes a moment). */
let pkiPromise: Promise<{ pki: Pki; www: CertPair; alice: CertPair }> | undefined;
function testPki() {
  pkiPromise ??= (async () => {
    const pki = await createPki();
    return {
      pki,
      www: await pki.leaf('www', { dns: [HOST] }),
      alice: await pki.leaf('alice', { cn: 'alice' }),
    };
  })();
  return pkiPromise;
}

/** A terminate listener with the `www` certificate. */
function terminating(www: CertPair, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'tls',
    address: '127.0.0.1:0',
    tls: 'terminate',
    certificates: [{ cert: www.cert, key: www.key }],
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// The table.

export const scenarios: readonly Scenario[] = [
  {
    name: 'TLS termination: an HTTPS client is served, the backend gets plaintext HTTP',
    spec: 'DESIGN listener pipeline: TLS termination with per-SNI certificates',
    async run(p) {
      const { pki, www } = await testPki();
      const web = await startHttpBackend('web');
      try {
        await withRouter(p, { listeners: [terminating(www)], addressBook: book(cluster([web.address])) }, async (r) => {
          const res = await tlsRequest(r.port('tls'), { servername: HOST, ca: pki.ca.certPem, send: get() });
          expect(res.error).toBeUndefined();
          expect(res.authorized).toBe(true);
          expect(bodyOf(res.data)).toMatchObject({ backend: 'web', host: HOST });
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'TLS termination with clientAuth required: no certificate → refused, a CA-signed one → served',
    spec: 'README listeners: clientAuth { ca, required }',
    async run(p) {
      const { pki, www, alice } = await testPki();
      const web = await startHttpBackend('web');
      try {
        const listener = terminating(www, { clientAuth: { ca: pki.ca.cert, required: true } });
        await withRouter(p, { listeners: [listener], addressBook: book(cluster([web.address])) }, async (r) => {
          const anon = await tlsRequest(r.port('tls'), { servername: HOST, ca: pki.ca.certPem, send: get() });
          expect(anon.data).not.toMatch(/^HTTP\/1\.1 200/);
          expect(web.hits).toBe(0);
          const authed = await tlsRequest(r.port('tls'), {
            servername: HOST,
            ca: pki.ca.certPem,
            client: alice,
            send: get(),
          });
          expect(bodyOf(authed.data)).toMatchObject({ backend: 'web' });
          expect(web.hits).toBe(1);
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'TLS termination: a client that closes as soon as its handshake callback runs is logged and released at once',
    spec: 'DESIGN listener pipeline: a refused handshake closes, logs and frees the slot (not at limits.peekTimeout)',
    async run(p) {
      const { pki, www } = await testPki();
      const web = await startHttpBackend('web');
      try {
        const config = {
          limits: { peekTimeout: '60s' },
          listeners: [terminating(www)],
          addressBook: book(cluster([web.address])),
        };
        await withRouter(p, config, async (r) => {
          // destroy() in the callback drops the client's own Finished: the router sees a FIN mid-handshake.
          await new Promise<void>((resolve, reject) => {
            const s = tlsConnect(
              { host: '127.0.0.1', port: r.port('tls'), servername: HOST, ca: pki.ca.certPem },
              () => {
                s.destroy();
                resolve();
              },
            );
            s.once('error', reject);
          });
          // Within 5 s of a 60 s deadline: only the FIN can have ended it.
          await r.waitForAccess(1, 5_000);
          expect(r.access[0]).toMatchObject({ listener: 'tls', protocol: 'tls' });
          expect(r.access[0]!.result).not.toBe('peek_timeout');
          expect(web.hits).toBe(0);
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'TLS passthrough: the ClientHello is routed by SNI and spliced to a TLS backend',
    spec: 'DESIGN: TLS passthrough peek',
    refusal: (p) =>
      runsHttp2(p)
        ? {
            config: {
              listeners: [{ name: 'pt', address: '127.0.0.1:0', tls: 'passthrough' }],
              addressBook: book(cluster(['127.0.0.1:1'])),
            },
            error: new RegExp(`listeners\\[0\\]\\.tls: passthrough is not supported by ${http2Name(p)}`),
          }
        : undefined,
    async run(p) {
      const { pki, www } = await testPki();
      const tlsBackend = await startTlsBackend('tls-be', www);
      try {
        const config = {
          listeners: [{ name: 'pt', address: '127.0.0.1:0', tls: 'passthrough' }],
          addressBook: book(cluster([tlsBackend.address])),
        };
        await withRouter(p, config, async (r) => {
          const res = await tlsRequest(r.port('pt'), { servername: HOST, ca: pki.ca.certPem });
          expect(JSON.parse(res.data.trim())).toMatchObject({ backend: 'tls-be', sni: HOST });
        });
      } finally {
        await closeAll(tlsBackend);
      }
    },
  },
  {
    name: 'PROXY in from a trusted peer: the header is stripped, its source is the logged client',
    spec: 'DESIGN listener pipeline: PROXY header in (trustedSources)',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const listener = { name: 'web', address: '127.0.0.1:0', proxyProtocol: 'v1', trustedSources: ['127.0.0.0/8'] };
        await withRouter(p, { listeners: [listener], addressBook: book(cluster([be.address])) }, async (r) => {
          const proxy = 'PROXY TCP4 203.0.113.9 198.51.100.1 40009 80\r\n';
          const res = await rawRequest(r.port(), proxy + get('/proxied'));
          expect(statusOf(res)).toBe(200);
          expect(be.all().toString('latin1')).not.toContain('PROXY TCP4');
          expect(be.all().toString('latin1')).toContain('GET /proxied HTTP/1.1');
          await r.waitForAccess(1);
          expect(r.access.some((a) => a.client.startsWith('203.0.113.9'))).toBe(true);
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'PROXY in from an untrusted peer: closed unanswered, logged proxy_rejected, no backend',
    spec: 'README listeners: trustedSources',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const listener = { name: 'web', address: '127.0.0.1:0', proxyProtocol: 'v1', trustedSources: ['10.0.0.0/8'] };
        await withRouter(p, { listeners: [listener], addressBook: book(cluster([be.address])) }, async (r) => {
          const proxy = 'PROXY TCP4 203.0.113.9 198.51.100.1 40009 80\r\n';
          expect(await closedUnanswered(r.port(), proxy + get())).toBe(true);
          await r.waitForAccess(1, 4_000);
          expect(r.access[0]).toMatchObject({ result: 'proxy_rejected' });
          expect(be.hits).toBe(0);
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  ...(['listener maxConnections', 'global maxConnections', 'maxConnectionsPerClient'] as const).map(
    (cap): Scenario => ({
      name: `${cap} 2: with two connections held, every further one is closed unanswered (overloaded), counted once per process`,
      spec: 'DESIGN listener pipeline: caps counted once per process, across worker threads',
      async run(p) {
        const web = await startHttpBackend('web');
        const held: Socket[] = [];
        try {
          const config = {
            listeners: [
              {
                name: 'web',
                address: '127.0.0.1:0',
                ...(cap === 'listener maxConnections' ? { maxConnections: 2 } : {}),
              },
            ],
            limits: {
              ...(cap === 'global maxConnections' ? { maxConnections: 2 } : {}),
              ...(cap === 'maxConnectionsPerClient' ? { maxConnectionsPerClient: 2 } : {}),
            },
            addressBook: book(cluster([web.address])),
          };
          await withRouter(p, config, async (r) => {
            held.push(await heldConnection(r.port()), await heldConnection(r.port()));
            const before = r.access.length;
            // Four more: with per-thread counting (2 threads) some would be accepted.
            for (let i = 0; i < 4; i++) expect(await closedUnanswered(r.port(), get())).toBe(true);
            await eventually(
              () => r.access.slice(before).filter((a) => a.result === 'overloaded').length === 4,
              4_000,
              'four overloaded access lines',
            );
            expect(web.hits).toBe(2);
          });
        } finally {
          for (const s of held) s.destroy();
          await closeAll(web);
        }
      },
    }),
  ),
  {
    name: 'peekTimeout: an incomplete head is answered 408 or closed within the deadline, no backend',
    spec: 'DESIGN config: limits.peekTimeout (PROXY header + head must arrive within this)',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const config = { limits: { peekTimeout: '300ms' }, addressBook: book(cluster([be.address])) };
        await withRouter(p, config, async (r) => {
          const started = Date.now();
          const res = await rawRequest(r.port(), `GET / HTTP/1.1\r\nHost: ${HOST}\r\n`, { timeoutMs: 4_000 });
          // The router, not the client's 4 s timeout, ended it (generous bound: 10× the deadline).
          expect(Date.now() - started).toBeLessThan(3_000);
          const status = statusOf(res);
          expect([0, 408]).toContain(status);
          expect(be.hits).toBe(0);
          await r.waitForAccess(1, 4_000);
          expect(r.access[0]).toMatchObject({ result: 'peek_timeout' });
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'a client that half-closes after its requests gets every response, then the connection closes',
    spec: 'DESIGN: half-close (a FIN is forwarded, not an abort); RFC 9112 §9.6',
    async run(p) {
      const web = await startHttpBackend('web');
      try {
        const config = { limits: { idleTimeout: '60s' }, addressBook: book(cluster([web.address])) };
        await withRouter(p, config, async (r) => {
          const two = `GET /a HTTP/1.1\r\nHost: ${HOST}\r\n\r\nGET /b HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;
          const post = `POST /c HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 5\r\n\r\nhello`;
          // The client's own timeout (4 s) is far below idleTimeout: the router closed after answering.
          const pipelined = (await rawRequest(r.port(), two, { end: true, timeoutMs: 4_000 })).toString('latin1');
          expect(pipelined.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
          expect(pipelined).toMatch(/"url":"\/b"/);
          const started = Date.now();
          const posted = await rawRequest(r.port(), post, { end: true, timeoutMs: 4_000 });
          expect(statusOf(posted)).toBe(200);
          // Closed by the router after the response, not by the client's timeout.
          expect(Date.now() - started).toBeLessThan(3_500);
          expect(web.hits).toBe(3);
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'a client that closes before its first request: one client_closed access line at once, no backend',
    spec: 'DESIGN listener pipeline: every connection ends in one access line; a FIN is not waited out to peekTimeout',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const config = { limits: { peekTimeout: '60s', idleTimeout: '60s' }, addressBook: book(cluster([be.address])) };
        await withRouter(p, config, async (r) => {
          const sends = [`GET / HTTP/1.1\r\nHost: ${HOST}\r\n`, prelude(), ''];
          for (const [i, bytes] of sends.entries()) {
            // The client's own timeout (4 s) is far below both 60 s deadlines.
            await rawRequest(r.port(), bytes, { end: true, timeoutMs: 4_000 });
            await r.waitForAccess(i + 1, 4_000);
            expect(r.access[i]).toMatchObject({ result: 'client_closed' });
          }
          expect(be.hits).toBe(0);
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'maxHeaderBytes: a larger HTTP/1.1 head is answered 431 (or closed), never forwarded',
    spec: 'DESIGN config: limits.maxHeaderBytes (larger head → 431)',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const config = { limits: { maxHeaderBytes: 2048 }, addressBook: book(cluster([be.address])) };
        await withRouter(p, config, async (r) => {
          const res = await rawRequest(r.port(), get('/', `X-Big: ${'a'.repeat(8_000)}\r\n`));
          expect([0, 431]).toContain(statusOf(res));
          expect(be.hits).toBe(0);
          // A head under the limit still goes through.
          expect(statusOf(await rawRequest(r.port(), get('/small')))).toBe(200);
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'maxHeaderBytes: a larger h2c header list is refused (431, reset or closed), never forwarded',
    spec: 'issue 16 item 4: the http2 panel applies maxHeaderBytes to header lists',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const config = { limits: { maxHeaderBytes: 2048 }, addressBook: book(cluster([be.address])) };
        await withRouter(p, config, async (r) => {
          const res = await h2cRequest(r.port(), { 'x-big': 'a'.repeat(8_000) });
          if ('status' in res) expect(res.status).toBe(431);
          expect(be.hits).toBe(0);
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'pathNormalization: spellings of a blackholed /admin/* get 503 (or 400), a keep listener reads them literally',
    spec: 'README "Paths: what path rules match"; issue 17 item 4',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        const config = {
          listeners: [
            { name: 'main', address: '127.0.0.1:0' },
            {
              name: 'keep',
              address: '127.0.0.1:0',
              pathNormalization: { mergeSlashes: false, escapedSlashes: 'keep' },
            },
          ],
          addressBook: {
            name: 'bfe',
            products: {
              p: {
                hosts: ['*'],
                basicRules: [
                  { hosts: ['*'], paths: ['/admin/*'], cluster: 'blocked' },
                  { hosts: ['*'], cluster: 'c' },
                ],
              },
            },
            clusters: { blocked: { subclusters: { GSLB_BLACKHOLE: { weight: 1 } } }, c: cluster([be.address]) },
          },
        };
        await withRouter(p, config, async (r) => {
          for (const path of [
            '//admin/secret',
            '/admin%2Fsecret',
            '/%61dmin/secret',
            '/./admin/secret',
            '/x/../admin/secret',
          ]) {
            expect([path, statusOf(await rawRequest(r.port('main'), get(path)))]).toEqual([path, 503]);
          }
          expect(statusOf(await rawRequest(r.port('main'), get('/admin%5Csecret')))).toBe(400);
          expect(be.hits).toBe(0);
          expect(statusOf(await rawRequest(r.port('keep'), get('/admin%2Fsecret')))).toBe(200);
          expect(be.hits).toBe(1);
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'upstream TLS with a certificate that fails verification: 502, nothing in clear at the backend',
    spec: 'DESIGN upstream pipeline: upstream TLS (ca, sni, verify)',
    async run(p) {
      const { pki } = await testPki();
      const other = await pki.otherCa('rogue-ca', 'Rogue CA');
      const rogue = await other.leaf('rogue', { dns: [HOST] });
      // The TLS backend sits behind a recording relay: every byte the router sends is kept.
      const tlsServer = createTlsServer({ cert: rogue.certPem, key: rogue.keyPem }, (s) => {
        s.on('error', () => {});
        s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
      });
      tlsServer.on('tlsClientError', () => {});
      await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', () => resolve()));
      const tlsPort = (tlsServer.address() as { port: number }).port;
      const relay = await startTcpBackend('relay', (socket) => {
        const up = netConnect({ port: tlsPort, host: '127.0.0.1' });
        up.on('error', () => socket.destroy());
        socket.on('error', () => up.destroy());
        socket.pipe(up).pipe(socket);
      });
      try {
        const c = cluster([relay.address], { tls: { ca: pki.ca.cert, sni: HOST }, retries: 0 });
        await withRouter(p, { addressBook: book(c) }, async (r) => {
          const res = await rawRequest(r.port(), get('/secret', 'Authorization: Bearer s3cret\r\n'));
          expect(statusOf(res)).toBe(502);
          const seen = relay.all();
          expect(seen.length).toBeGreaterThan(0);
          expect(seen[0]).toBe(0x16);
          expect(seen.toString('latin1')).not.toContain('s3cret');
          expect(seen.toString('latin1')).not.toContain('GET /secret');
        });
      } finally {
        await closeAll(relay);
        await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
      }
    },
  },
  {
    name: 'outbound PROXY v1: the backend gets the client address before the request',
    spec: 'DESIGN upstream pipeline: outbound PROXY header',
    async run(p) {
      const be = await okTcpBackend('be');
      try {
        await withRouter(p, { addressBook: book(cluster([be.address], { proxyProtocol: 'v1' })) }, async (r) => {
          expect(statusOf(await rawRequest(r.port(), get('/pp')))).toBe(200);
          const text = be.all().toString('latin1');
          expect(text).toMatch(/^PROXY TCP4 127\.0\.0\.1 127\.0\.0\.1 \d+ \d+\r\n/);
          expect(text).toContain('GET /pp HTTP/1.1');
        });
      } finally {
        await closeAll(be);
      }
    },
  },
  {
    name: 'retries + crossRetries: 4 refusing backends in 2 sub-clusters → 502 after exactly 4 attempts',
    spec: 'DESIGN: findJack loop with retries and crossRetries (test/integration/retry-budget)',
    async run(p) {
      const dead: string[] = [];
      for (let i = 0; i < 4; i++) dead.push(`127.0.0.1:${await closedPort()}`);
      const c = {
        retries: 2,
        crossRetries: 1,
        healthCheck: { failNum: 100 },
        subclusters: {
          dc1: { weight: 1, backends: [{ address: dead[0] }, { address: dead[1] }] },
          dc2: { weight: 1, backends: [{ address: dead[2] }, { address: dead[3] }] },
        },
      };
      // Attempts are seen on the diagnostics channel where the panel runs in this thread.
      const attempts: string[] = [];
      const onConnect = (m: unknown) => attempts.push((m as { backend: { id: string } }).backend.id);
      subscribe('switchboard:upstream:connect', onConnect);
      try {
        await withRouter(p, { addressBook: book(c) }, async (r) => {
          const res = await rawRequest(r.port(), get());
          expect(statusOf(res)).toBe(502);
          await r.waitForAccess(1);
          expect(r.access.at(-1)).toMatchObject({ result: 'connect_failed', attempts: 4 });
          if (typeof p.panel === 'string') {
            expect(attempts).toHaveLength(4);
            expect(new Set(attempts).size).toBe(4);
          }
        });
      } finally {
        unsubscribe('switchboard:upstream:connect', onConnect);
      }
    },
  },
  {
    name: 'retries: the first backend refuses, the second answers (every request 200)',
    spec: 'DESIGN: on a failed connect report it and ask findJack again',
    async run(p) {
      const dead = `127.0.0.1:${await closedPort()}`;
      const live = await startHttpBackend('live');
      try {
        await withRouter(p, { addressBook: book(cluster([dead, live.address])) }, async (r) => {
          for (let i = 0; i < 4; i++) expect(statusOf(await rawRequest(r.port(), get()))).toBe(200);
          expect(live.hits).toBe(4);
        });
      } finally {
        await closeAll(live);
      }
    },
  },
  {
    name: 'health: an active check takes a dead backend out (requests reach the live one at the first attempt)',
    spec: 'DESIGN backend registry: health judged per (cluster, backend)',
    async run(p) {
      const live = await startHttpBackend('live');
      const doomed: TestBackend = await startHttpBackend('doomed');
      try {
        const c = cluster([live.address, doomed.address], {
          healthCheck: { active: true, interval: '100ms', timeout: '200ms', failNum: 1 },
        });
        await withRouter(p, { addressBook: book(c) }, async (r) => {
          await doomed.close();
          await eventually(
            async () => {
              const before = r.access.length;
              for (let i = 0; i < 6; i++) if (statusOf(await rawRequest(r.port(), get())) !== 200) return false;
              await r.waitForAccess(before + 6);
              return r.access.slice(before).every((a) => a.attempts === 1 && a.backend === live.address);
            },
            6_000,
            'the dead backend taken out',
          );
        });
      } finally {
        await closeAll(live);
      }
    },
  },
  {
    name: 'outlierStatus: a backend answering 5xx is taken out by passive health (requests reach the good one)',
    spec: 'BFE OutlierDetectionHttpCode; README cluster outlierStatus',
    // A cluster option of the address book (maybe an etcd or sqlite one, changing at run time),
    // so no panel validator sees it at config load to refuse it.
    notFor: (p) =>
      routesPerConnection(p)
        ? 'per-connection routing splices responses unread, so no status reaches passive health (README "Panels and options": cluster outlierStatus is per-request routing)'
        : undefined,
    async run(p) {
      const good = await startHttpBackend('good');
      const bad = await startHttpBackend('bad', (_req, res) => {
        res.statusCode = 503;
        res.end('unavailable');
      });
      try {
        const c = cluster([good.address, bad.address], {
          outlierStatus: '5xx',
          // The probe asks for 200, so the bad backend stays out once passive health took it out.
          healthCheck: { type: 'http', path: '/', statusCode: 200, failNum: 2, interval: '100ms', timeout: '200ms' },
        });
        await withRouter(p, { operator: 'round-robin', addressBook: book(c) }, async (r) => {
          await eventually(
            async () => {
              for (let i = 0; i < 6; i++) if (statusOf(await rawRequest(r.port(), get())) !== 200) return false;
              return true;
            },
            6_000,
            'the 5xx backend taken out',
          );
          expect(r.access.some((a) => a.backend === bad.address && a.status === 503)).toBe(true);
        });
      } finally {
        await closeAll(good, bad);
      }
    },
  },
  {
    name: 'reload adding a listener: the new listener serves, the old one still does',
    spec: 'README reload: listeners follow reloads',
    async run(p) {
      const web = await startHttpBackend('web');
      try {
        const base = { addressBook: book(cluster([web.address])) };
        await withRouter(p, base, async (r) => {
          const port = await closedPort();
          const result = await reloadWith(r, p, {
            ...base,
            listeners: [...LISTEN, { name: 'added', address: `127.0.0.1:${port}` }],
          });
          expect(result.errors).toEqual([]);
          expect((await httpGet(port)).status).toBe(200);
          expect((await httpGet(r.port('web'))).status).toBe(200);
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'reload renewing a certificate: new TLS connections get the new certificate',
    spec: 'README reload: certificates are re-read',
    async run(p) {
      const { pki, www } = await testPki();
      const renewed = await pki.leaf(`renewed-${Math.random().toString(36).slice(2)}`, {
        dns: [HOST],
        cn: 'renewed www',
      });
      const web = await startHttpBackend('web');
      try {
        const base = { addressBook: book(cluster([web.address])) };
        await withRouter(p, { ...base, listeners: [terminating(www)] }, async (r) => {
          expect(await servedCn(r.port('tls'), pki.ca.certPem)).toBe(HOST);
          const result = await reloadWith(r, p, { ...base, listeners: [terminating(renewed)] });
          expect(result.errors).toEqual([]);
          await eventually(
            async () => (await servedCn(r.port('tls'), pki.ca.certPem)) === 'renewed www',
            4_000,
            'the renewed certificate served',
          );
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'drain: a request in flight at close completes; the listener stops accepting',
    spec: 'README shutdown: listeners stop accepting, in-flight responses finish within drainTimeout',
    async run(p) {
      let release: () => void = () => {};
      const arrived = new Promise<void>((resolve) => {
        release = resolve;
      });
      const slow = await startHttpBackend('slow', (_req, res) => {
        release();
        setTimeout(() => res.end('done'), 400);
      });
      const r = await startTestRouter(configFor(p, { addressBook: book(cluster([slow.address])) }));
      try {
        const port = r.port();
        const inflight = httpGet(port);
        await arrived;
        const closing = r.close();
        const res = await inflight;
        expect(res).toMatchObject({ status: 200, body: 'done' });
        await closing;
        await expect(httpGet(port)).rejects.toThrow();
      } finally {
        await r.close().catch(() => {});
        await closeAll(slow);
      }
    },
  },
  {
    name: 'metrics totals: admin /metrics counts exactly the requests sent, and each client connection once with its bytes',
    // Per-connection routing reads no response: each request here is a connection of its own,
    // counted by result in switchboard_connections_total (requests_total is per-request routing).
    // Every panel counts each connection's end once: the http2 panel published none (its lines
    // are per request and stream), so its connections and bytes were missing.
    spec: 'docs/operations.md metrics: switchboard_requests_total, switchboard_connections_total, switchboard_bytes_total',
    async run(p) {
      const web = await startHttpBackend('web');
      try {
        const config = { admin: { address: '127.0.0.1:0' }, addressBook: book(cluster([web.address])) };
        await withRouter(p, config, async (r) => {
          const N = 12;
          // Each on a connection of its own (no agent: Connection: close).
          for (let i = 0; i < N; i++) expect((await httpGet(r.port())).status).toBe(200);
          const admin = r.router.admin!.address().port;
          let counted = -1;
          let connections = -1;
          let bytesIn = -1;
          await eventually(
            async () => {
              const m = parsePrometheus(await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text());
              counted = routesPerConnection(p)
                ? sum(m, 'switchboard_connections_total', { listener: 'web', result: 'ok' })
                : sum(m, 'switchboard_requests_total', { status: '200' });
              connections = sum(m, 'switchboard_connections_total', { listener: 'web' });
              bytesIn = sum(m, 'switchboard_bytes_total', { listener: 'web', direction: 'in' });
              return counted >= N && connections >= N;
            },
            4_000,
            'the requests and connections counted',
          ).catch(() => {});
          expect(counted).toBe(N);
          expect(connections).toBe(N);
          // Each request head is over 40 bytes.
          expect(bytesIn).toBeGreaterThan(N * 40);
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'Upgrade: h2c on an h2c: allow listener is refused with 400 and reaches no backend, even one that would switch',
    // On `h2c: route` (the net panel's per-request default) the router switches it: h2c-upgrade.test.ts.
    spec: 'README HTTP/1 routing: what the router checks (RFC 9113 §3.1); issue 17 item 5, issue 40 item 7',
    async run(p) {
      // An h2c-capable backend: it answers any request with 101 to h2c.
      const h2c = await startTcpBackend('h2c', (socket) => {
        socket.once('data', () =>
          socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n'),
        );
      });
      try {
        const listeners = [{ name: 'web', address: '127.0.0.1:0', h2c: 'allow' }];
        await withRouter(p, { listeners, addressBook: book(cluster([h2c.address])) }, async (r) => {
          const res = await rawRequest(
            r.port(),
            // get() adds `Connection: close`: the Connection tokens are the union of both lines.
            get('/', 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n'),
          );
          expect(statusOf(res)).toBe(400);
          expect(res.toString('latin1')).toMatch(/x-switchboard-error: bad_request/i);
          expect(h2c.hits).toBe(0);
        });
      } finally {
        await closeAll(h2c);
      }
    },
  },
  {
    name: 'listeners[].h2c: refuse: the h2c preface gets GOAWAY HTTP_1_1_REQUIRED and an access line, HTTP/1 is served',
    spec: 'README listeners: h2c (allow | refuse); issue 17 item 5',
    async run(p) {
      const web = await startHttpBackend('web');
      try {
        const listeners = [{ name: 'web', address: '127.0.0.1:0', h2c: 'refuse' }];
        await withRouter(p, { listeners, addressBook: book(cluster([web.address])) }, async (r) => {
          const reply = await new Promise<Buffer>((resolve) => {
            const s = netConnect({ port: r.port(), host: '127.0.0.1', allowHalfOpen: true });
            const chunks: Buffer[] = [];
            s.on('data', (c: Buffer) => chunks.push(c));
            s.on('error', () => {});
            s.on('close', () => resolve(Buffer.concat(chunks)));
            s.end(
              Buffer.concat([
                prelude(),
                headers(
                  block([
                    [':method', 'GET'],
                    [':scheme', 'http'],
                    [':authority', HOST],
                    [':path', '/'],
                  ]),
                ),
              ]),
            );
          });
          expect(goawayCode(reply)).toBe(0xd);
          expect(web.hits).toBe(0);
          await r.waitForAccess(1, 4_000);
          expect(r.access[0]).toMatchObject({ result: 'bad_request', reason: expect.stringMatching(/h2c: refuse/) });
          expect(bodyOf((await rawRequest(r.port(), get())).toString('latin1'))).toMatchObject({ backend: 'web' });
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  {
    name: 'access lines: one line per request with listener, client, host, backend, status and result',
    // Per-connection: each request here is a connection of its own, its line without the status.
    spec: "README access log (`status` on a connection line: only the router's own answer)",
    async run(p) {
      const web = await startHttpBackend('web');
      try {
        await withRouter(p, { addressBook: book(cluster([web.address])) }, async (r) => {
          for (let i = 0; i < 3; i++) expect((await httpGet(r.port(), `/a${i}`)).status).toBe(200);
          await r.waitForAccess(3);
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect(r.access).toHaveLength(3);
          // Worker threads post their lines independently: the order across threads is not promised.
          const lines = [...r.access].sort((x, y) => String(x.path).localeCompare(String(y.path)));
          lines.forEach((a, i) => {
            expect(a).toMatchObject({ listener: 'web', host: HOST, path: `/a${i}`, result: 'ok' });
            // A per-connection line is a connection line: a status only where the router answered.
            expect(a.status).toBe(routesPerConnection(p) ? undefined : 200);
            expect(a.client).toMatch(/^127\.0\.0\.1:\d+$/);
            expect(a.backend).toBe(web.address);
          });
        });
      } finally {
        await closeAll(web);
      }
    },
  },
  // Admin runtime control of backends (issue 19): in its own file.
  ...backendControlScenarios,
  // Admin listener bounds and per-client caps behind PROXY (issue 39): in their own file.
  ...capsScenarios,
  ...headerCountScenarios,
  ...h2cRouteScenarios,
  ...h2cUpgradeScenarios,
  ...keepAliveScenarios,
  // Policies at the connection point (issue 42 step 2): in their own file.
  ...policyScenarios,
  // Policies at the request and routed points (issue 42 item 6): in their own file.
  ...requestPolicyScenarios,
];

/**
 * Runs the whole table against `p`: one `it` per scenario, refusals asserted at config load, a
 * scenario `notFor` this panel reported skipped with its reason.
 */
export function panelConformance(p: PanelUnderTest, table: readonly Scenario[] = scenarios): void {
  describe(`panel conformance: ${p.label}`, () => {
    for (const s of table) {
      const refusal = s.refusal?.(p);
      const notFor = s.notFor?.(p);
      if (notFor !== undefined) {
        it.skip(`${s.name} — not for ${p.label}: ${notFor}`, () => {});
      } else if (refusal !== undefined) {
        it(`${s.name} — refused by config load`, async () => {
          const error = await startTestRouter(configFor(p, refusal.config)).then(
            async (r) => {
              await r.close();
              return undefined;
            },
            (e: unknown) => e as ConfigError,
          );
          expect(error?.code).toBe('SWB_ERR_CONFIG');
          expect(error?.errors?.join('\n')).toMatch(refusal.error);
        });
      } else {
        it(s.name, () => s.run(p), s.timeoutMs ?? 15_000);
      }
    }
  });
}

/** Removes the test PKI made by the TLS scenarios (a test file's afterAll). */
export async function closePki(): Promise<void> {
  const made = await pkiPromise;
  pkiPromise = undefined;
  await made?.pki.close();
}
