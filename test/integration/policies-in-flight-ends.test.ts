/**
 * `in-flight` at the request point gives its slot back on every end path (issue 42 items 3, 4;
 * docs/policies.md `in-flight`), on every panel that counts requests differently: net
 * per-request (each request), net per-connection (the first request; the slot is the
 * connection's), http2 (each stream) and worker over net with 2 threads (one count for the
 * process, SharedCounters).
 *
 * With `max: 1` keyed by client address, request A is held at the backend. While it is, request
 * B gets 429: the slot is taken, so this test can fail (a slot not given back leaves every later
 * request at 429, and the `eventually` below times out). Then A ends by one path — its response
 * done, the client resetting (TCP RST, or RST_STREAM CANCEL on h2) or closing (FIN: bounded by
 * `halfCloseTimeout`), the backend destroying its socket mid-response, the router's idle timeout,
 * or a reload while it is in flight (the old engine drains it; the unchanged rule keeps its
 * count, so B is refused after the reload too) — and the next request passes, reaching the
 * backend. A's access line shows that it ended by that path. The last path, a graceful shutdown
 * whose drain deadline cuts A, leaves no router to ask: there the count itself is read (1 while
 * A is held, 0 once the router has closed).
 */
import { appendFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { type ClientHttp2Session, type ClientHttp2Stream, constants, connect as h2connect } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

/** A backend that answers `/ok` at once and holds every other request until told. */
interface GatedBackend {
  readonly backend: TestBackend;
  /** Requests held now. */
  held(): number;
  /** Answers every held request 200 `done`. */
  release(): void;
  /** Sends a held request's head and part of its body, then destroys the socket. */
  reset(): void;
}

async function gatedBackend(): Promise<GatedBackend> {
  const waiting: ServerResponse[] = [];
  const backend = await startHttpBackend('gated', (req, res) => {
    if (req.url === '/ok') res.writeHead(200, { 'content-length': 2 }).end('ok');
    else waiting.push(res);
  });
  return {
    backend,
    held: () => waiting.length,
    release() {
      for (const res of waiting.splice(0)) res.writeHead(200, { 'content-length': 4 }).end('done');
    },
    reset() {
      for (const res of waiting.splice(0)) {
        res.writeHead(200, { 'content-length': 100 });
        res.write('partial');
        setImmediate(() => res.socket?.destroy());
      }
    },
  };
}

/** How request A ends. */
type EndPath =
  | 'response done'
  | 'client reset'
  | 'client close'
  | 'backend reset'
  | 'idle timeout'
  | 'drain (reload)'
  | 'drain (shutdown)';
const END_PATHS: readonly EndPath[] = [
  'response done',
  'client reset',
  'client close',
  'backend reset',
  'idle timeout',
  'drain (reload)',
  'drain (shutdown)',
];

/** Request A, in flight. */
interface InFlight {
  /** The client resets it: TCP RST (HTTP/1) or RST_STREAM CANCEL (h2). */
  reset(): void;
  /** The client closes its connection (HTTP/1) or session (h2). */
  close(): void;
  /** Resolves once the router ended it, with the status it got (0: none). */
  readonly ended: Promise<number>;
}

/** The clients of a panel: A held open, and one complete request's status. */
interface Clients {
  hold(port: number, path: string): InFlight;
  status(port: number, path: string): Promise<number>;
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

/** Raw HTTP/1 over node net: A keep-alive (per-connection: `Connection: close`, its slot is the connection's). */
function http1(perConnection: boolean): Clients {
  return {
    hold(port, path) {
      const s: Socket = connect({ port, host: '127.0.0.1' });
      let data = '';
      s.setEncoding('latin1');
      s.on('error', () => {});
      const ended = new Promise<number>((resolve) => {
        s.on('data', (d: string) => {
          data += d;
          // A complete response (`done`, content-length 4) ends A even if the connection stays.
          if (/\r\n\r\ndone$/.test(data)) resolve(statusOf(data));
        });
        s.once('close', () => resolve(/\r\n\r\ndone$/.test(data) ? statusOf(data) : 0));
      });
      s.write(`GET ${path} HTTP/1.1\r\nHost: a.test\r\n${perConnection ? 'Connection: close\r\n' : ''}\r\n`);
      return { reset: () => s.resetAndDestroy(), close: () => s.destroy(), ended };
    },
    status(port, path) {
      return new Promise((resolve) => {
        const s = connect({ port, host: '127.0.0.1' });
        let data = '';
        s.setEncoding('latin1');
        s.on('data', (d: string) => {
          data += d;
        });
        s.on('error', () => {});
        s.once('close', () => resolve(statusOf(data)));
        s.write(`GET ${path} HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n`);
      });
    },
  };
}

const get = (path: string) => ({ ':method': 'GET', ':path': path, ':authority': 'a.test' });

/** node's http2 client, prior knowledge: A on a session of its own. */
const h2: Clients = {
  hold(port, path) {
    const session: ClientHttp2Session = h2connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const stream: ClientHttp2Stream = session.request(get(path));
    stream.on('error', () => {});
    let status = 0;
    stream.on('response', (h) => {
      status = Number(h[':status']);
    });
    stream.resume();
    const ended = new Promise<number>((resolve) =>
      stream.once('close', () => {
        resolve(stream.rstCode === 0 ? status : 0);
        session.close();
      }),
    );
    return {
      reset: () => stream.close(constants.NGHTTP2_CANCEL),
      close: () => session.destroy(),
      ended,
    };
  },
  status(port, path) {
    return new Promise((resolve) => {
      const session = h2connect(`http://127.0.0.1:${port}`);
      session.on('error', () => resolve(0));
      const stream = session.request(get(path));
      let status = 0;
      stream.on('response', (h) => {
        status = Number(h[':status']);
      });
      stream.on('error', () => {});
      stream.resume();
      stream.once('close', () => {
        session.close();
        resolve(status);
      });
    });
  },
};

interface PanelCase {
  readonly label: string;
  readonly keys: Record<string, unknown>;
  readonly clients: Clients;
}

const PANELS: readonly PanelCase[] = [
  { label: 'net per-request', keys: { panel: 'net', routing: 'per-request' }, clients: http1(false) },
  { label: 'net per-connection', keys: { panel: 'net', routing: 'per-connection' }, clients: http1(true) },
  { label: 'http2', keys: { panel: 'http2' }, clients: h2 },
  {
    label: 'worker (net, 2 threads)',
    keys: { panel: { name: 'worker', threads: 2, engine: 'net' } },
    clients: http1(false),
  },
];

/**
 * The bounds an end path needs: the idle timeout; and for a client close, the half-close bound.
 * A client's FIN is a half-close to the router (HTTP/1 allows reading the response after it), so
 * its request stays in flight until the response or `halfCloseTimeout` (default 60 s); the http2
 * panel does the same for an h2 client's FIN (panels/http2/streams.ts: its open streams are
 * finished, then the session closed), so it is bounded the same way.
 */
const LIMITS: Partial<Record<EndPath, Record<string, string>>> = {
  'idle timeout': { idleTimeout: '1500ms' },
  'client close': { halfCloseTimeout: '1s' },
};

/** A's access-line result per end path, on any of the panels (per-connection splices: the connection's). */
const RESULTS: Record<EndPath, RegExp> = {
  'response done': /^ok$/,
  'client reset': /^client_(error|reset)$/,
  'client close': /^(client_error|client_reset|ok)$/,
  'backend reset': /^(upstream_closed|upstream_reset|ok)$/,
  'idle timeout': /^(idle_timeout|upstream_reset)$/,
  'drain (reload)': /^ok$/,
  // http2: the session's streams are cancelled at the drain deadline (logged as code 8, CANCEL).
  'drain (shutdown)': /^(client_error|client_reset)$/,
};

/** In-flight slots held now, over every counter of the router's rule set. */
function slotsHeld(r: TestRouter): number {
  let n = 0;
  for (const [, c] of r.router.runtime.engine.policies.counters.entries()) if ('acquire' in c) n += c.size;
  return n;
}

const RULE = { name: 'one', use: 'in-flight', point: 'request', options: { key: 'client-ip', max: 1 } };

describe.each(PANELS)('in-flight max 1 on $label: the slot comes back on every end path', (p) => {
  let gated: GatedBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await gated?.backend.close();
    router = undefined;
    gated = undefined;
  });

  it.each(END_PATHS)('%s', async (path) => {
    gated = await gatedBackend();
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${gated.backend.address}] }\n` });
    const limits = LIMITS[path] ?? {};
    const r = await startTestRouter(
      { ...p.keys, addressBook: { name: 'file', path: 'servers.yaml' }, policies: [RULE], limits },
      { dir },
    );
    router = r;
    const port = r.port();
    const g = gated;

    const a = p.clients.hold(port, '/hold');
    await eventually(() => g.held() === 1, 10_000, 'request A held at the backend');
    if (path === 'drain (reload)') {
      // Same rule, other text: a new engine; A stays on the old one until it ends.
      await appendFile(join(dir, 'switchboard.yaml'), '# reloaded while A is in flight\n');
      expect(await r.router.reload()).toMatchObject({ ok: true, changed: true });
    }
    // A holds the one slot: B is refused (a slot never given back would refuse C the same way).
    expect(await p.clients.status(port, '/ok')).toBe(429);

    switch (path) {
      case 'response done':
      case 'drain (reload)':
        g.release();
        expect(await a.ended).toBe(200);
        break;
      case 'client reset':
        a.reset();
        break;
      case 'client close':
        a.close();
        break;
      case 'backend reset':
        g.reset();
        expect(await a.ended).toBe(0);
        break;
      case 'idle timeout':
        // http2: the stream's upstream link is the idle side (502 upstream_reset); net: the client connection.
        expect(await a.ended).not.toBe(200);
        break;
      case 'drain (shutdown)': {
        // No next request on a router that is gone: the count itself, held now, must be 0 after.
        expect(slotsHeld(r)).toBe(1);
        // A is never answered: the drain deadline (the harness's drainTimeout, 1 s) cuts it.
        const closing = r.close();
        expect(await a.ended).not.toBe(200);
        await closing;
        break;
      }
    }
    // A ended by that path (its access line; per-connection: the connection's).
    await eventually(() => r.access.some((x) => x.path === '/hold'), 10_000, "A's access line");
    expect(r.access.find((x) => x.path === '/hold')?.result).toMatch(RESULTS[path]);
    if (path === 'drain (shutdown)') {
      expect(slotsHeld(r)).toBe(0);
      return;
    }
    // The slot came back: the next request passes (polled: a client's reset reaches the router a little later).
    const hitsBefore = g.backend.hits;
    await eventually(
      async () => (await p.clients.status(port, '/ok')) === 200,
      10_000,
      'a request passing after A ended',
    );
    expect(g.backend.hits).toBeGreaterThan(hitsBefore);
  });
});
