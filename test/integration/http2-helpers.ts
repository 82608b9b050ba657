/**
 * Helpers for the http2 panel tests: an h2c backend that says who it is, and a small
 * promise wrapper around one stream of Node's http2 client.
 */
import {
  type ClientHttp2Session,
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface H2Backend {
  readonly name: string;
  readonly port: number;
  readonly address: string;
  readonly server: Http2Server | Http2SecureServer;
  /** Streams received. */
  readonly streams: ServerHttp2Stream[];
  /** Sessions accepted. */
  sessions: number;
  /** Sends GOAWAY on every open session and closes them gracefully. */
  goawayAll(): void;
  close(): Promise<void>;
}

export type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, name: string) => void;

/** Answers `{ backend, path, authority, method, body }` after reading the whole request body. */
export const echoWho: StreamHandler = (stream, headers, name) => {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => {
    if (stream.destroyed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/json', 'x-backend': name });
    stream.end(
      JSON.stringify({
        backend: name,
        path: headers[':path'],
        authority: headers[':authority'],
        method: headers[':method'],
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
};

/** An h2c backend on port 0; with `tls`, an h2 backend (TLS, ALPN h2) with that certificate. */
export async function startH2Backend(
  name: string,
  handler: StreamHandler = echoWho,
  tls?: { readonly certPem: string; readonly keyPem: string },
): Promise<H2Backend> {
  const server = tls === undefined ? createServer() : createSecureServer({ cert: tls.certPem, key: tls.keyPem });
  const streams: ServerHttp2Stream[] = [];
  const backend: H2Backend = {
    name,
    port: 0,
    address: '',
    server,
    streams,
    sessions: 0,
    goawayAll: () => {
      for (const s of open) s.close();
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of open) s.destroy();
      }),
  };
  const open = new Set<import('node:http2').ServerHttp2Session>();
  server.on('session', (s) => {
    backend.sessions++;
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  server.on('stream', (stream, headers) => {
    streams.push(stream);
    stream.on('error', () => {});
    handler(stream, headers, name);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(backend, { port, address: `127.0.0.1:${port}` });
}

export interface H2Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly trailers: IncomingHttpHeaders;
}

/** Sends one request on `session` and collects the reply. */
export function h2Request(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body?: Buffer | string,
  trailers?: OutgoingHttpHeaders,
): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, {
      endStream: body === undefined && trailers === undefined,
      waitForTrailers: trailers !== undefined,
    });
    if (trailers !== undefined) stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    let head: IncomingHttpHeaders = {};
    let tail: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      head = h;
    });
    stream.on('trailers', (t) => {
      tail = t;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', reject);
    stream.on('close', () => {
      if (stream.rstCode !== 0 && head[':status'] === undefined) reject(new Error(`stream reset ${stream.rstCode}`));
      else resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(chunks), trailers: tail });
    });
    if (body !== undefined) stream.end(body);
    else if (trailers !== undefined) stream.end();
  });
}
