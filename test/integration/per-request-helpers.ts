/**
 * Shared pieces of the per-request routing tests: HTTP backends that record what they served and
 * count their open sockets, a collector of per-request access records, and the leak check.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { AccessRecord } from '../../src/base/log.ts';
import { eventually, type TestRouter } from '../harness/router.ts';

/** An HTTP/1.1 keep-alive backend that names itself in every answer. */
export interface NamedBackend {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** `METHOD host url` of every request served, in order. */
  readonly seen: string[];
  /** Open sockets right now. */
  open(): number;
  /** Connections ever accepted. */
  connections(): number;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

const whoami =
  (name: string): Handler =>
  (req, res, body) => {
    const text = JSON.stringify({
      backend: name,
      host: req.headers.host,
      url: req.url,
      method: req.method,
      body: body.length,
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-backend': name,
      'content-length': Buffer.byteLength(text),
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  };

/** Starts a named backend; `handler` sees the whole request body. */
export async function startNamedBackend(name: string, handler: Handler = whoami(name)): Promise<NamedBackend> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.headers.host} ${req.url}`);
      handler(req, res, Buffer.concat(chunks));
    });
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    seen,
    open: () => sockets.size,
    connections: () => connections,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Collects the records published on `switchboard:request:end`. */
export function collectRequests(): { records: AccessRecord[]; stop(): void } {
  const records: AccessRecord[] = [];
  const on = (m: unknown) => records.push({ ...(m as { record: AccessRecord }).record });
  subscribe('switchboard:request:end', on);
  return { records, stop: () => unsubscribe('switchboard:request:end', on) };
}

/** Waits until the router holds no client connection, no upstream is counted active, and the backends hold no socket. */
export async function noLeaks(router: TestRouter, backends: readonly { open(): number }[] = []): Promise<void> {
  const panel = router.router.panel as unknown as { connections: number };
  await eventually(
    () =>
      panel.connections === 0 &&
      [...router.router.runtime.registry.all()].every((s) => s.active === 0) &&
      backends.every((b) => b.open() === 0),
    10_000,
    'every socket closed',
  );
}

/** Splits concatenated raw HTTP/1 responses that all carry Content-Length (or no body for HEAD/204). */
export function splitResponses(
  raw: Buffer,
  methods: readonly string[],
): { status: number; head: string; body: Buffer }[] {
  const out: { status: number; head: string; body: Buffer }[] = [];
  let at = 0;
  for (const method of methods) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end === -1) break;
    const head = raw.toString('latin1', at, end);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
    const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
    const length = method === 'HEAD' || status === 204 || status === 304 || cl === null ? 0 : Number(cl[1]);
    out.push({ status, head, body: raw.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

/** A raw client connection: what it received so far (latin1), and a promise of its close. */
export function openClient(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect({ port, host: '127.0.0.1' });
  let data = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    data += d;
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, received: () => data, closed };
}
