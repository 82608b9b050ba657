/**
 * Tracing end to end (issue 44): a real router exporting OTLP/HTTP JSON to a loopback receiver
 * written here (test/harness/otlp-receiver.ts), real backends, real clients. A request with a
 * known `traceparent` gives a SERVER span of that trace whose parent is the caller's span and a
 * CLIENT span per attempt (a refused first backend shows two); the backend receives the request
 * byte for byte (sha256), `traceparent` included; an unsampled parent exports nothing; without
 * one the ratio decides. On the net panel in both routing modes and on the http2 panel. The
 * receiver stalled: every request completes, the queue stays bounded and the drops are counted
 * on /metrics.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { connect as h2connect } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { closedPort, startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { createPki } from '../harness/certs.ts';
import { httpGet } from '../harness/http.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../harness/otlp-receiver.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { startTlsBackend, tlsRequest } from '../harness/tls-backend.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const RESPONSE = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** A backend answering each request head with RESPONSE and closing; it keeps every byte it got. */
function startBackend(): Promise<TcpBackend> {
  return startTcpBackend('b', (socket: Socket) => {
    let head = '';
    socket.on('data', (c: Buffer) => {
      head += c.toString('latin1');
      if (head.includes('\r\n\r\n')) socket.end(RESPONSE);
    });
  });
}

/** Sends `text` on one connection; resolves with the answer once the router closes. */
function send(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.on('data', (c: Buffer) => (data += c.toString('latin1')));
    s.on('error', reject);
    s.once('close', () => resolve(data));
    s.write(text);
  });
}

const head = (traceparent?: string) =>
  `GET /t HTTP/1.1\r\nHost: a.test\r\n${traceparent === undefined ? '' : `traceparent: ${traceparent}\r\ntracestate: k=v\r\n`}Connection: close\r\n\r\n`;

describe('tracing, end to end', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });

  async function start(
    options: {
      ratio?: number;
      routing?: string;
      panel?: string | object;
      listeners?: object[];
      backends?: string[];
      receiver?: OtlpReceiver;
      tracing?: object;
    } = {},
  ): Promise<{ router: TestRouter; receiver: OtlpReceiver; backend: TcpBackend }> {
    const receiver = options.receiver ?? (await startOtlpReceiver());
    const backend = await startBackend();
    open.push(receiver, backend);
    const list = options.backends ?? [backend.address];
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${list.join(', ')}], retries: 1 }\n` });
    const router = await startTestRouter(
      {
        operator: 'round-robin',
        ...(options.listeners === undefined ? {} : { listeners: options.listeners }),
        addressBook: { name: 'file', path: 'servers.yaml' },
        ...(options.routing === undefined ? {} : { routing: options.routing }),
        ...(options.panel === undefined ? {} : { panel: options.panel }),
        admin: { address: '127.0.0.1:0', open: ['/metrics'] },
        tracing: {
          endpoint: receiver.url,
          protocol: 'http/json',
          serviceName: 'edge',
          sampler: { ratio: options.ratio ?? 0 },
          flushInterval: '20ms',
          ...options.tracing,
        },
      },
      { dir },
    );
    open.push(router);
    return { router, receiver, backend };
  }

  const servers = (r: OtlpReceiver) => r.spans.filter((s) => s.kind === SERVER);
  const clientsOf = (r: OtlpReceiver, server: ReceivedSpan) =>
    r.spans.filter((s) => s.kind === CLIENT && s.parentSpanId === server.spanId);

  for (const routing of ['per-request', 'per-connection']) {
    it(`net ${routing}: a SERVER span under the caller, a CLIENT span per attempt, the bytes untouched`, async () => {
      const refused = `127.0.0.1:${await closedPort()}`;
      const backendPlaceholder = await startBackend();
      open.push(backendPlaceholder);
      const { router, receiver, backend } = await start({ routing, backends: [refused, backendPlaceholder.address] });
      // Round-robin: of two requests, one tries the refused backend first.
      const sent: string[] = [];
      for (let i = 0; i < 2; i++) {
        const text = head(`00-${TRACE}-${PARENT}-01`);
        sent.push(text);
        expect(await send(router.port(), text)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      }
      // The backend got each request byte for byte: nothing injected, traceparent as sent.
      expect(backend.hits).toBe(0);
      expect(backendPlaceholder.received.map((c) => sha(Buffer.concat(c)))).toEqual(sent.map(sha));
      await eventually(() => servers(receiver).length === 2 && receiver.spans.length === 5);
      for (const s of servers(receiver)) {
        expect(s).toMatchObject({ traceId: TRACE, parentSpanId: PARENT, name: 'GET', service: 'edge' });
        expect(s.attributes).toMatchObject({
          'switchboard.listener': 'web',
          'switchboard.result': 'ok',
          'http.request.method': 'GET',
        });
      }
      const attempts = servers(receiver).map((s) => clientsOf(receiver, s));
      const retried = attempts.find((a) => a.length === 2);
      expect(retried?.map((c) => [c.attributes['switchboard.attempt'], c.status === ERROR])).toEqual([
        [1, true],
        [2, false],
      ]);
      expect(retried?.[0]?.attributes['switchboard.backend']).toBe(refused);
      expect(retried?.[1]?.attributes['switchboard.backend']).toBe(backendPlaceholder.address);
      // The access line names the trace and the router's span.
      const lines = router.access.filter((a) => a.trace_id !== undefined);
      expect(lines.map((a) => a.trace_id)).toEqual([TRACE, TRACE]);
      expect(new Set(lines.map((a) => a.span_id))).toEqual(new Set(servers(receiver).map((s) => s.spanId)));
    });
  }

  /**
   * A backend that sends its response head, then holds the body until `release()`: the test
   * releases it once the client has the head, so the router read the head before the body
   * existed. The CLIENT span (dial … first response byte) must end before the SERVER span.
   */
  async function startSlowBodyBackend(): Promise<{ backend: TcpBackend; release(): void }> {
    const waiting: Socket[] = [];
    const backend = await startTcpBackend('slow', (socket: Socket) => {
      let head = '';
      socket.on('data', (c: Buffer) => {
        head += c.toString('latin1');
        if (!head.includes('\r\n\r\n') || waiting.includes(socket)) return;
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\n');
        waiting.push(socket);
      });
    });
    open.push(backend);
    return { backend, release: () => waiting.shift()?.end('body') };
  }

  /** The one SERVER span and its CLIENT span: the client's ends at the head, inside the server's, before its end. */
  async function expectClientEndsAtHead(receiver: OtlpReceiver): Promise<void> {
    await eventually(() => servers(receiver).length === 1 && receiver.spans.length === 2);
    const [server] = servers(receiver);
    const [client] = clientsOf(receiver, server!);
    expect(client?.name).toBe('GET');
    expect(client!.start).toBeGreaterThanOrEqual(server!.start);
    expect(client!.end).toBeGreaterThan(client!.start);
    // The body was released only after the client had the head: the server span ends later.
    expect(client!.end).toBeLessThan(server!.end);
    const connected = client!.events.find((e) => e.name === 'connected');
    expect(connected?.time).toBeGreaterThanOrEqual(client!.start);
    expect(connected?.time).toBeLessThanOrEqual(client!.end);
  }

  it('net per-request: the CLIENT span ends at the first response byte, before the SERVER span', async () => {
    const slow = await startSlowBodyBackend();
    const { router, receiver } = await start({ routing: 'per-request', backends: [slow.backend.address] });
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect({ port: router.port(), host: '127.0.0.1' });
      let data = '';
      s.on('data', (c: Buffer) => {
        data += c.toString('latin1');
        if (data.endsWith('\r\n\r\n')) slow.release(); // the head is through: now the body
      });
      s.on('error', reject);
      s.once('close', () => resolve(data));
      s.write(head(`00-${TRACE}-${PARENT}-01`));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nbody$/);
    await expectClientEndsAtHead(receiver);
  });

  it('http2 panel: the CLIENT span ends at the first response byte, before the SERVER span', async () => {
    const slow = await startSlowBodyBackend();
    const { router, receiver } = await start({ panel: 'http2', backends: [slow.backend.address] });
    const client = h2connect(`http://127.0.0.1:${router.port()}`);
    open.push({ close: () => new Promise<void>((r) => client.close(() => r())) });
    const body = await new Promise<string>((resolve, reject) => {
      const s = client.request({ ':path': '/t', ':authority': 'a.test', traceparent: `00-${TRACE}-${PARENT}-01` });
      let data = '';
      s.on('response', () => slow.release());
      s.on('data', (c: Buffer) => (data += c.toString('latin1')));
      s.on('end', () => resolve(data));
      s.on('error', reject);
    });
    expect(body).toBe('body');
    await expectClientEndsAtHead(receiver);
  });

  it('an unsampled parent exports nothing; without a parent ratio 1 makes a new root (and 0 none)', async () => {
    const one = await start({ ratio: 1 });
    await send(one.router.port(), head(`00-${TRACE}-${PARENT}-00`));
    await send(one.router.port(), head());
    await eventually(() => one.receiver.spans.length >= 2);
    const [root] = servers(one.receiver);
    expect(servers(one.receiver)).toHaveLength(1);
    expect(root?.parentSpanId).toBe('');
    expect(root?.traceId).not.toBe(TRACE);

    const zero = await start({ ratio: 0 });
    for (let i = 0; i < 5; i++) await send(zero.router.port(), head());
    // A sampled request after them: once its span is in, the five unsampled would have been too.
    await send(zero.router.port(), head(`00-${TRACE}-${PARENT}-01`));
    await eventually(() => servers(zero.receiver).length >= 1);
    expect(servers(zero.receiver).map((s) => s.traceId)).toEqual([TRACE]);
    expect(zero.router.access.filter((a) => a.trace_id !== undefined)).toHaveLength(1);
  });

  it('http2 panel: each stream is a SERVER span under its caller; the backend gets traceparent as sent', async () => {
    const { router, receiver, backend } = await start({ panel: 'http2' });
    const client = h2connect(`http://127.0.0.1:${router.port()}`);
    open.push({ close: () => new Promise<void>((r) => client.close(() => r())) });
    const get = (traceparent: string) =>
      new Promise<number>((resolve, reject) => {
        const s = client.request({ ':path': '/t', ':authority': 'a.test', traceparent });
        s.on('response', (h) => resolve(Number(h[':status'])));
        s.on('error', reject);
        s.resume();
      });
    const other = '0af7651916cd43dd8448eb211c80319c';
    expect(await get(`00-${TRACE}-${PARENT}-01`)).toBe(200);
    expect(await get(`00-${other}-b7ad6b7169203331-01`)).toBe(200);
    await eventually(() => servers(receiver).length === 2);
    expect(
      servers(receiver)
        .map((s) => [s.traceId, s.parentSpanId])
        .sort(),
    ).toEqual(
      [
        [TRACE, PARENT],
        [other, 'b7ad6b7169203331'],
      ].sort(),
    );
    for (const s of servers(receiver)) expect(clientsOf(receiver, s)).toHaveLength(1);
    expect(backend.all().toString('latin1')).toContain(`traceparent: 00-${TRACE}-${PARENT}-01\r\n`);
  });

  it('worker panel, 2 threads: each thread exports its own spans; the access lines name the trace; /metrics sums the threads', async () => {
    const { router, receiver, backend } = await start({ panel: { name: 'worker', threads: 2, engine: 'net' } });
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      const text = head(`00-${TRACE}-${PARENT}-01`);
      sent.push(text);
      expect(await send(router.port(), text)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    }
    expect(backend.received.map((c) => sha(Buffer.concat(c)))).toEqual(sent.map(sha));
    await eventually(() => servers(receiver).length === 4);
    for (const s of servers(receiver)) {
      expect(s).toMatchObject({ traceId: TRACE, parentSpanId: PARENT });
      expect(clientsOf(receiver, s)).toHaveLength(1);
    }
    await eventually(() => router.access.filter((a) => a.trace_id === TRACE).length === 4);
    // The threads' counts are summed on the main thread's /metrics: 4 SERVER + 4 CLIENT spans.
    const admin = router.router.admin?.address().port ?? 0;
    const exported = async () =>
      Number(
        /^switchboard_tracing_spans_exported_total (\d+)$/m.exec(
          (await httpGet(admin, '/metrics', { host: '127.0.0.1' })).body,
        )?.[1],
      );
    await eventually(async () => (await exported()) === 8);
  });

  it('TLS passthrough: one SERVER span per connection with network attributes and the SNI, ratio 1 a new root', async () => {
    const pki = await createPki();
    open.push(pki);
    const tls = await startTlsBackend('t', await pki.leaf('backend', { dns: ['a.example.test'] }));
    open.push(tls);
    const { router, receiver } = await start({
      ratio: 1,
      listeners: [{ name: 'pass', address: '127.0.0.1:0', tls: 'passthrough' }],
      backends: [tls.address],
    });
    const reply = await tlsRequest(router.port(), { servername: 'a.example.test' });
    expect(reply.data).toContain('"backend":"t"');
    await eventually(() => servers(receiver).length === 1);
    const [s] = servers(receiver);
    expect(s).toMatchObject({ name: 'tls pass', parentSpanId: '' });
    expect(s?.attributes).toMatchObject({
      'tls.server.name': 'a.example.test',
      'network.protocol.name': 'tls',
      'switchboard.listener': 'pass',
      'switchboard.backend': tls.address,
    });
    expect(s?.attributes['http.request.method']).toBeUndefined();
    expect(clientsOf(receiver, s!).map((c) => c.name)).toEqual(['connect']);
  });

  it('exemplars: the per-backend duration histogram carries the trace id in OpenMetrics, not in Prometheus text', async () => {
    const { router, receiver } = await start({ routing: 'per-request' });
    expect(await send(router.port(), head(`00-${TRACE}-${PARENT}-01`))).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    await eventually(() => servers(receiver).length === 1);
    const admin = router.router.admin?.address().port ?? 0;
    const scrape = (accept?: string) =>
      httpGet(admin, '/metrics', { host: '127.0.0.1', ...(accept === undefined ? {} : { headers: { accept } }) });
    const om = await scrape('application/openmetrics-text; version=1.0.0,text/plain;q=0.5');
    expect(om.headers['content-type']).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    expect(om.body).toMatch(
      new RegExp(
        `^switchboard_backend_request_duration_seconds_bucket\\{[^}]*\\} 1 # \\{trace_id="${TRACE}"\\} [0-9.e-]+ [0-9.]+$`,
        'm',
      ),
    );
    expect(om.body.endsWith('# EOF\n')).toBe(true);
    // The default stays Prometheus text, without exemplars, its counter names intact after an OpenMetrics scrape.
    const text = await scrape();
    expect(text.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text.body).not.toContain('# {trace_id');
    expect(text.body).toMatch(/^switchboard_backend_requests_total\{/m);
    expect(text.body).toMatch(/^# TYPE switchboard_requests_total counter$/m);
  });

  it('a reload that changes or removes tracing: is refused, naming the section; other changes reload', async () => {
    const { router } = await start({ ratio: 0 });
    const file = join(router.dir, 'switchboard.yaml');
    const config = parse(await readFile(file, 'utf8')) as Record<string, unknown> & { tracing: object };
    await writeFile(file, stringify({ ...config, tracing: { ...config.tracing, sampler: { ratio: 0.5 } } }));
    const changed = await router.router.reload();
    expect(changed.ok).toBe(false);
    expect(changed.errors).toEqual(['tracing: changing the tracing section needs a restart']);
    const { tracing: _, ...without } = config;
    await writeFile(file, stringify(without));
    expect((await router.router.reload()).errors).toEqual(['tracing: removing the tracing section needs a restart']);
    await writeFile(file, stringify({ ...config, limits: { drainTimeout: '2s' } }));
    expect((await router.router.reload()).errors).toEqual([]);
  });

  it('the receiver stalled: requests are not delayed, the queue stays bounded, drops are counted', async () => {
    const stalled = await startOtlpReceiver({ stall: true });
    const { router } = await start({
      receiver: stalled,
      ratio: 1,
      tracing: { batchSize: 5, queueSize: 20, exportTimeout: '2s', flushInterval: '10s' },
    });
    const started = performance.now();
    const answers: string[] = [];
    for (let i = 0; i < 100; i++) answers.push(await send(router.port(), head()));
    const ms = performance.now() - started;
    expect(answers.filter((a) => a.startsWith('HTTP/1.1 200 OK\r\n'))).toHaveLength(100);
    const admin = router.router.admin?.address().port ?? 0;
    const metrics = (await httpGet(admin, '/metrics', { host: '127.0.0.1' })).body;
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);
    const [queued, dropped, failed, exported] = [
      value('switchboard_tracing_queue_spans'),
      value('switchboard_tracing_spans_dropped_total'),
      value('switchboard_tracing_spans_failed_total'),
      value('switchboard_tracing_spans_exported_total'),
    ];
    // 200 spans (a SERVER and a CLIENT per request): at most 20 wait, 5 are in the one export that
    // the receiver never answers (each failed export after 2 s lets 5 more go), the rest dropped.
    expect(queued).toBeLessThanOrEqual(20);
    expect(exported).toBe(0);
    expect(dropped).toBeGreaterThanOrEqual(150);
    expect(queued + dropped + failed).toBeGreaterThanOrEqual(195);
    expect(queued + dropped + failed).toBeLessThanOrEqual(200);
    expect(stalled.posts).toBeGreaterThanOrEqual(1);
    console.log(`tracing, receiver stalled: 100 requests in ${ms.toFixed(0)} ms`);
  });
});
