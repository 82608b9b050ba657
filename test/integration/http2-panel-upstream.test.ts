/**
 * The http2 panel on the core's upstream pipeline (issue 16 §3): the cluster's `tls:` towards
 * HTTP/1 and h2 backends (verified; a wrong CA answers 502 and nothing crosses in clear), the
 * outbound PROXY header on every new upstream connection (private to its client), a bounded
 * HTTP/1 pool under 2,000 streams of one client connection, and the
 * `switchboard:upstream:connect` channel.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type ClientHttp2Session, connect as h2connect } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { Command, type IPv4ProxyAddress, V2ProxyProtocol } from 'proxy-protocol-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channels } from '../../src/base/diagnostics.ts';
import { closedPort, startTcpBackend, type TcpBackend, type TestBackend } from '../harness/backend.ts';
import { createPki, type Pki } from '../harness/certs.ts';
import { type RecordingRelay, startRecordingRelay } from '../harness/recording-relay.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { startHttpsBackend } from '../harness/tls-backend.ts';
import { type H2Backend, h2Request, startH2Backend } from './http2-helpers.ts';

const SIG = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
const TLS_HANDSHAKE = 0x16;

/**
 * A raw HTTP/1 backend behind PROXY v2: skips the header (its signature holds a CRLFCRLF), then
 * answers every complete request head with a 200 (keep-alive).
 */
function answeringPerHead(): Promise<TcpBackend> {
  return startTcpBackend('pp', (socket) => {
    let text = '';
    let header = true;
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (header) {
        if (text.length < 16) return;
        const length = 16 + Buffer.from(text.slice(14, 16), 'latin1').readUInt16BE(0);
        if (text.length < length) return;
        text = text.slice(length);
        header = false;
      }
      let end = text.indexOf('\r\n\r\n');
      while (end !== -1) {
        text = text.slice(end + 4);
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        end = text.indexOf('\r\n\r\n');
      }
    });
  });
}

/** An HTTP/1 backend that answers after a short pause and counts the connections it accepted. */
async function startCountingBackend(): Promise<{ server: HttpServer; address: string; accepted: () => number }> {
  let accepted = 0;
  const server = createHttpServer({ keepAliveTimeout: 60_000 }, (_req, res) => {
    setTimeout(() => res.end('ok'), 5);
  });
  server.on('connection', (s: Socket) => {
    accepted++;
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return { server, address: `127.0.0.1:${port}`, accepted: () => accepted };
}

function connectClient(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = h2connect(`http://127.0.0.1:${port}`);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

const get = (host: string, extra: Record<string, string> = {}) => ({
  ':method': 'GET',
  ':path': '/x',
  ':authority': host,
  ...extra,
});

describe('http2 panel: the upstream pipeline', () => {
  let pki: Pki;
  let https: TestBackend;
  let goodRelay: RecordingRelay;
  let wrongRelay: RecordingRelay;
  let h2tls: H2Backend;
  let pp: TcpBackend;
  let many: Awaited<ReturnType<typeof startCountingBackend>>;
  let narrow: H2Backend;
  let inFlight = 0;
  let peak = 0;
  let router: TestRouter;
  let client: ClientHttp2Session;
  let deadPort: number;
  const connects: { backend: { id: string }; ok: boolean; error?: string }[] = [];
  const onConnect = (m: unknown) => connects.push(m as (typeof connects)[number]);

  beforeAll(async () => {
    subscribe(channels.upstreamConnect.name, onConnect);
    pki = await createPki();
    await pki.otherCa('other', 'Some Other CA');
    const cert = await pki.leaf('backend', { dns: ['backend.test'], ip: ['127.0.0.1'] });
    https = await startHttpsBackend('secure', cert);
    goodRelay = await startRecordingRelay(https.port);
    wrongRelay = await startRecordingRelay(https.port);
    h2tls = await startH2Backend('h2tls', undefined, cert);
    pp = await answeringPerHead();
    many = await startCountingBackend();
    // An h2c backend that allows 5 concurrent streams and answers each after a short pause.
    narrow = await startH2Backend('narrow', (stream) => {
      peak = Math.max(peak, ++inFlight);
      stream.on('close', () => inFlight--);
      setTimeout(() => {
        if (stream.destroyed) return;
        stream.respond({ ':status': 200 });
        stream.end('ok');
      }, 5);
    });
    narrow.server.updateSettings({ maxConcurrentStreams: 5 });
    deadPort = await closedPort();
    const cluster = (address: string, policy: Record<string, unknown>) => ({
      retries: 0,
      ...policy,
      subclusters: { s: { weight: 1, backends: [{ address }] } },
    });
    const product = (host: string, c: string) => ({ hosts: [host], rules: [{ cond: 'default_t()', cluster: c }] });
    router = await startTestRouter(
      {
        panel: 'http2',
        addressBook: {
          name: 'bfe',
          products: {
            tls1: product('tls1.test', 'tls1'),
            wrongca: product('wrongca.test', 'wrongca'),
            h2tls: product('h2tls.test', 'h2tls'),
            h2wrong: product('h2wrong.test', 'h2wrong'),
            pp: product('pp.test', 'pp'),
            many: product('many.test', 'many'),
            narrow: product('narrow.test', 'narrow'),
            down: product('down.test', 'down'),
          },
          clusters: {
            tls1: cluster(goodRelay.address, { tls: { sni: 'backend.test', ca: 'ca.crt' } }),
            wrongca: cluster(wrongRelay.address, { tls: { sni: 'backend.test', ca: 'other.crt' } }),
            h2tls: cluster(h2tls.address, { protocol: 'h2', tls: { sni: 'backend.test', ca: 'ca.crt' } }),
            h2wrong: cluster(h2tls.address, { protocol: 'h2', tls: { sni: 'backend.test', ca: 'other.crt' } }),
            pp: cluster(pp.address, { proxyProtocol: 'v2' }),
            many: cluster(many.address, {}),
            narrow: cluster(narrow.address, { protocol: 'h2c' }),
            down: cluster(`127.0.0.1:${deadPort}`, {}),
          },
        },
      },
      { dir: pki.dir },
    );
    client = await connectClient(router.port());
  });
  afterAll(async () => {
    unsubscribe(channels.upstreamConnect.name, onConnect);
    client?.close();
    await router?.close();
    await Promise.all([
      https?.close(),
      goodRelay?.close(),
      wrongRelay?.close(),
      h2tls?.close(),
      pp?.close(),
      narrow?.close(),
    ]);
    await new Promise((r) => many?.server.close(r));
    many?.server.closeAllConnections();
    await pki?.close();
  });

  it('protocol http1 + tls: HTTPS to the backend, SNI from the cluster, verified against its CA', async () => {
    const r = await h2Request(client, get('tls1.test', { authorization: 'Bearer secret' }));
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString())).toMatchObject({ backend: 'secure', sni: 'backend.test', host: 'tls1.test' });
    // Every byte that reached the backend was TLS.
    expect(goodRelay.received.length).toBeGreaterThan(0);
    for (const conn of goodRelay.received) expect(Buffer.concat(conn)[0]).toBe(TLS_HANDSHAKE);
  });

  it('protocol http1 + tls with a wrong CA: 502 connect_failed, nothing sent in clear', async () => {
    const r = await h2Request(client, get('wrongca.test', { authorization: 'Bearer secret' }));
    expect(r.status).toBe(502);
    expect(r.headers['x-switchboard-error']).toBe('connect_failed');
    await eventually(() => wrongRelay.received.length > 0);
    const seen = Buffer.concat(wrongRelay.received.flat());
    expect(seen[0]).toBe(TLS_HANDSHAKE);
    expect(seen.includes('Bearer secret')).toBe(false);
    expect(seen.includes('GET /x')).toBe(false);
  });

  it('protocol h2 + tls: TLS with ALPN h2 and the cluster CA; a wrong CA answers 502', async () => {
    const ok = await h2Request(client, get('h2tls.test'));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.toString())).toMatchObject({ backend: 'h2tls', authority: 'h2tls.test' });
    const streams = h2tls.streams.length;
    const bad = await h2Request(client, get('h2wrong.test'));
    expect(bad.status).toBe(502);
    expect(bad.headers['x-switchboard-error']).toBe('connect_failed');
    expect(h2tls.streams.length).toBe(streams);
  });

  it('outbound PROXY v2 on every new upstream connection, one connection per client connection', async () => {
    const clients = [await connectClient(router.port()), await connectClient(router.port())];
    try {
      for (const c of clients) {
        // Two requests in a row on one client connection reuse its upstream connection.
        expect((await h2Request(c, get('pp.test'))).status).toBe(200);
        expect((await h2Request(c, get('pp.test'))).status).toBe(200);
      }
      await eventually(() => pp.received.length === 2 && pp.received.every((r) => r.length > 0));
      const ports = clients.map((c) => c.socket.localPort);
      const seen = pp.received.map((chunks) => {
        const got = Buffer.concat(chunks);
        expect(got.subarray(0, 12).equals(SIG)).toBe(true);
        expect(got.indexOf(SIG, 1)).toBe(-1); // exactly one header per connection
        const parsed = V2ProxyProtocol.parse(got);
        expect(parsed.command).toBe(Command.PROXY);
        const a = parsed.proxyAddress as IPv4ProxyAddress;
        expect(a.sourceAddress.address.join('.')).toBe('127.0.0.1');
        expect(a.destinationPort).toBe(router.port());
        const requests = got.toString('latin1').match(/GET \/x HTTP\/1\.1/g) ?? [];
        expect(requests.length).toBe(2);
        return a.sourcePort;
      });
      expect(seen.sort()).toEqual(ports.sort());
    } finally {
      for (const c of clients) c.close();
    }
  });

  it('2,000 streams on one client connection to an HTTP/1 backend: all answered over a bounded pool', async () => {
    const replies = await Promise.all(Array.from({ length: 2000 }, () => h2Request(client, get('many.test'))));
    expect(replies.filter((r) => r.status === 200).length).toBe(2000);
    expect(many.accepted()).toBeGreaterThan(1);
    expect(many.accepted()).toBeLessThanOrEqual(128);
  });

  it('h2c: one session per backend; streams beyond its SETTINGS_MAX_CONCURRENT_STREAMS wait, none fails', async () => {
    const replies = await Promise.all(Array.from({ length: 100 }, () => h2Request(client, get('narrow.test'))));
    expect(replies.filter((r) => r.status === 200).length).toBe(100);
    expect(narrow.sessions).toBe(1);
    expect(peak).toBeLessThanOrEqual(5);
  });

  it('publishes switchboard:upstream:connect for its connects, failed ones included', async () => {
    connects.length = 0;
    const r = await h2Request(client, get('down.test'));
    expect(r.status).toBe(502);
    await eventually(() => connects.some((m) => m.backend.id === `127.0.0.1:${deadPort}` && !m.ok));
    const fresh = await connectClient(router.port());
    try {
      await h2Request(fresh, get('pp.test')); // private to this client: a new connection
    } finally {
      fresh.close();
    }
    await eventually(() => connects.some((m) => m.backend.id === pp.address && m.ok));
  });
});
