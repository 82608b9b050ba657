/**
 * Traffic for the policy scenarios at the request points: a raw HTTP/1.1 connection that sends
 * requests one at a time and reads each whole response (so two requests provably share one
 * connection), an HTTP/2 session helper (one stream, its status, headers and body), a backend
 * that answers the sha256 of the body it received (byte identity), and one that holds its
 * responses until released (in-flight).
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type ClientHttp2Session, connect as h2Connect, type SecureClientSessionOptions } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { startHttpBackend, type TestBackend } from './backend.ts';

/** One response: status, headers (lower-case names, first occurrence) and body. */
export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Parses a whole HTTP/1 response at the start of `data` (Content-Length framing), else undefined. */
function parseH1(data: Buffer): { reply: Reply; length: number } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] ??= line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? '0');
  if (data.length < end + 4 + length) return undefined;
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? '0');
  return { reply: { status, headers, body: data.subarray(end + 4, end + 4 + length) }, length: end + 4 + length };
}

/**
 * One client connection to 127.0.0.1:port. `request` writes bytes and resolves with the next
 * whole response on this connection (rejects if the router closes first or after 4 s);
 * `closed` resolves when the connection closes, `closedByPeer` says whether the router did it.
 */
export class H1Connection {
  readonly #s: Socket;
  #data = Buffer.alloc(0);
  #wake: (() => void) | undefined;
  #ended = false;
  readonly closed: Promise<void>;
  constructor(port: number) {
    this.#s = netConnect({ port, host: '127.0.0.1' });
    this.#s.on('error', () => {});
    this.#s.on('data', (d: Buffer) => {
      this.#data = Buffer.concat([this.#data, d]);
      this.#wake?.();
    });
    this.#s.on('end', () => (this.#ended = true));
    this.closed = new Promise((resolve) =>
      this.#s.once('close', () => {
        this.#wake?.();
        resolve();
      }),
    );
  }
  /** Whether the router ended the connection (a FIN read), not this client. */
  get closedByPeer(): boolean {
    return this.#ended;
  }
  /** Resolves once connected. */
  connected(): Promise<void> {
    return new Promise((resolve) => (this.#s.connecting ? this.#s.once('connect', () => resolve()) : resolve()));
  }
  /** Writes `bytes` and reads the next whole response. */
  request(bytes: string | Buffer): Promise<Reply> {
    this.#s.write(bytes);
    return this.next();
  }
  /** The next whole response on this connection. */
  next(): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error('no whole response within 4 s')), 4_000);
      const finish = (e?: Error) => {
        this.#wake = undefined;
        clearTimeout(timer);
        if (e !== undefined) reject(e);
      };
      const check = () => {
        const got = parseH1(this.#data);
        if (got !== undefined) {
          this.#data = this.#data.subarray(got.length);
          finish();
          resolve(got.reply);
        } else if (this.#s.destroyed) finish(new Error(`closed before a whole response (${this.#data.length} bytes)`));
      };
      this.#wake = check;
      check();
    });
  }
  destroy(): void {
    this.#s.destroy();
  }
}

/** Sends `bytes` over TLS (HTTP/1.1, SNI `servername`) and parses the response read until the router closes (4 s bound). */
export function tlsH1Request(port: number, ca: string, servername: string, bytes: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ port, host: '127.0.0.1', ca, servername, ALPNProtocols: ['http/1.1'] });
    const timer = setTimeout(() => s.destroy(new Error('no response within 4 s')), 4_000);
    let data = Buffer.alloc(0);
    s.on('secureConnect', () => s.write(bytes));
    s.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
    s.on('error', reject);
    s.on('close', () => {
      clearTimeout(timer);
      const got = parseH1(data);
      if (got === undefined) reject(new Error(`no whole response over TLS (${data.length} bytes)`));
      else resolve(got.reply);
    });
  });
}

/** An h2c session (plain `http://`) or h2 over TLS (`https://`, with `tls` options). */
export function h2Session(port: number, tls?: SecureClientSessionOptions): ClientHttp2Session {
  const session =
    tls === undefined ? h2Connect(`http://127.0.0.1:${port}`) : h2Connect(`https://127.0.0.1:${port}`, tls);
  session.on('error', () => {});
  return session;
}

/** One stream on `session`: its response, or rejects with the error or reset that ended it (4 s bound). */
export function h2Request(
  session: ClientHttp2Session,
  headers: Record<string, string | number>,
  body?: Buffer,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    const timer = setTimeout(() => stream.destroy(new Error('no response within 4 s')), 4_000);
    let status = 0;
    const out: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':') && v !== undefined) out[k] = String(v);
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => {});
    stream.on('close', () => {
      clearTimeout(timer);
      if (status === 0 || stream.rstCode !== 0)
        reject(new Error(`stream ended without a response (${stream.rstCode})`));
      else resolve({ status, headers: out, body: Buffer.concat(chunks) });
    });
    if (body !== undefined) stream.end(body);
  });
}

/** The hex sha256 of `bytes`. */
export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A backend answering `{ sha256, bytes, method, url }` of each request it receives. */
export function startHashingBackend(name: string): Promise<TestBackend> {
  return startHttpBackend(name, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got = Buffer.concat(chunks);
      const body = JSON.stringify({ sha256: sha256(got), bytes: got.length, method: req.method, url: req.url });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
}

/** A backend that holds every response until `release()`, then answers at once. */
export interface HoldingBackend extends TestBackend {
  /** Requests received and not answered yet. */
  readonly held: number;
  /** Answers the held requests and every later one at once. */
  release(): void;
}

export async function startHoldingBackend(name: string): Promise<HoldingBackend> {
  const waiting: ServerResponse[] = [];
  let holding = true;
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-length': 4 }).end('done');
  const backend = await startHttpBackend(name, (_req, res) => (holding ? waiting.push(res) : answer(res)));
  return {
    get name() {
      return backend.name;
    },
    get port() {
      return backend.port;
    },
    get address() {
      return backend.address;
    },
    get hits() {
      return backend.hits;
    },
    get held() {
      return waiting.length;
    },
    release() {
      holding = false;
      for (const res of waiting.splice(0)) answer(res);
    },
    close: () => backend.close(),
  };
}
