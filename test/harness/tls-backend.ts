/**
 * TLS test peers on port 0: a TLS backend that reports the SNI and ALPN it saw, an HTTPS
 * backend that says who it is, a TLS client that collects the reply, and a relay that reshapes
 * the client's first record (one byte per write, or two records) on its way to the router.
 */
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, connect as netConnect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer as createTlsServer, type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { TestBackend } from './backend.ts';
import type { CertPair } from './certs.ts';

/** What a TLS backend reports on each connection. */
export interface TlsReport {
  readonly backend: string;
  readonly sni: string | null;
  readonly alpn: string | false | null;
}

function closer(server: import('node:net').Server, sockets: Set<Socket>) {
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return () => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  };
}

/** A TLS backend that writes one JSON line `{ backend, sni, alpn }` after the handshake, then ends. */
export async function startTlsBackend(name: string, pair: CertPair, alpn?: string[]): Promise<TestBackend> {
  let hits = 0;
  const server = createTlsServer(
    { cert: pair.certPem, key: pair.keyPem, ...(alpn === undefined ? {} : { ALPNProtocols: alpn }) },
    (socket: TLSSocket) => {
      hits++;
      socket.on('error', () => {});
      const servername = (socket as TLSSocket & { servername?: string | false }).servername;
      const report: TlsReport = { backend: name, sni: servername || null, alpn: socket.alpnProtocol };
      socket.end(`${JSON.stringify(report)}\n`);
    },
  );
  server.on('tlsClientError', () => {});
  const close = closer(server, new Set());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    get hits() {
      return hits;
    },
    close,
  };
}

/** An HTTPS backend answering `{ backend, host, url, sni }`. */
export async function startHttpsBackend(name: string, pair: CertPair): Promise<TestBackend> {
  let hits = 0;
  const server = createHttpsServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    hits++;
    const servername = (req.socket as TLSSocket & { servername?: string | false }).servername;
    const body = JSON.stringify({ backend: name, host: req.headers.host, url: req.url, sni: servername || null });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  const close = closer(server, new Set());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    get hits() {
      return hits;
    },
    close,
  };
}

export interface TlsClientOptions {
  readonly servername?: string;
  readonly alpn?: string[];
  readonly ca?: string;
  /** Client certificate for mutual TLS. */
  readonly client?: CertPair;
  /** Bytes to send after the handshake. */
  readonly send?: string;
}

/** The outcome of one TLS client connection: what it received, or the error that ended it. */
export interface TlsResult {
  readonly data: string;
  readonly error: string | undefined;
  readonly authorized: boolean;
  readonly alpn: string | false | null;
}

/** Connects with TLS to 127.0.0.1:port and collects everything until the server closes. */
export function tlsRequest(port: number, o: TlsClientOptions = {}): Promise<TlsResult> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      port,
      host: '127.0.0.1',
      ...(o.servername === undefined ? {} : { servername: o.servername }),
      ...(o.alpn === undefined ? {} : { ALPNProtocols: o.alpn }),
      ...(o.ca === undefined ? { rejectUnauthorized: false } : { ca: o.ca }),
      ...(o.client === undefined ? {} : { cert: o.client.certPem, key: o.client.keyPem }),
    });
    let data = '';
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(new Error('client timeout')), 10_000);
    socket.setEncoding('utf8');
    socket.on('secureConnect', () => {
      if (o.send !== undefined) socket.write(o.send);
    });
    socket.on('data', (d: string) => (data += d));
    socket.on('error', (e) => (error ??= e.message));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data, error, authorized: socket.authorized, alpn: socket.alpnProtocol ?? null });
    });
  });
}

/** How the relay reshapes the client's first TLS record. */
export type Reshape = (firstRecord: Buffer) => Buffer[];

/**
 * A TCP relay on port 0 in front of `targetPort`: the client's first complete record goes
 * through `reshape` (each returned chunk is one write, with a short pause between writes), and
 * everything after it is piped unchanged both ways.
 */
export async function startRelay(
  targetPort: number,
  reshape: Reshape,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = createNetServer((client) => {
    const upstream = netConnect({ port: targetPort, host: '127.0.0.1' });
    upstream.setNoDelay(true);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    upstream.pipe(client);
    let buf = Buffer.alloc(0);
    const onData = async (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 5 || buf.length < 5 + buf.readUInt16BE(3)) return;
      client.removeListener('data', onData);
      client.pause();
      const len = 5 + buf.readUInt16BE(3);
      for (const chunk of reshape(buf.subarray(0, len))) {
        upstream.write(chunk);
        await sleep(1);
      }
      if (buf.length > len) upstream.write(buf.subarray(len));
      client.pipe(upstream);
      client.resume();
    };
    client.on('data', onData);
  });
  const close = closer(server, new Set());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, close };
}
