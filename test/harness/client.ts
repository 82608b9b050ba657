/**
 * Raw clients for tests: send exact bytes (optionally a few at a time) and collect the reply.
 */
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RawOptions {
  /** Write this many bytes per write (default: all at once). */
  readonly chunkSize?: number;
  /** Pause between chunked writes, ms. */
  readonly delayMs?: number;
  /** Half-close right after writing (default: only once the server has ended its side). */
  readonly end?: boolean;
  /** Give up waiting for the server to close after this long (default 5 s). */
  readonly timeoutMs?: number;
}

/** Sends `bytes` to 127.0.0.1:port and resolves with everything received until the server closes. */
export async function rawRequest(port: number, bytes: Buffer | string, options: RawOptions = {}): Promise<Buffer> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
  const socket: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.setNoDelay(true);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve) => {
    const timer = setTimeout(() => socket.destroy(), options.timeoutMs ?? 5000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => socket.end());
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => socket.once('connect', () => r()));
  const size = options.chunkSize ?? data.length;
  for (let i = 0; i < data.length && !socket.destroyed; i += size) {
    socket.write(data.subarray(i, i + size));
    if (options.delayMs !== undefined && i + size < data.length) await sleep(options.delayMs);
  }
  if (options.end) socket.end();
  return done;
}

/** The status code of a raw HTTP/1 response. */
export function statusOf(response: Buffer): number {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(response.toString('latin1'));
  return m === null ? 0 : Number(m[1]);
}

/** The value of a header in a raw HTTP/1 response (first occurrence). */
export function headerOf(response: Buffer, name: string): string | undefined {
  const head = response.toString('latin1').split('\r\n\r\n')[0] ?? '';
  const re = new RegExp(`^${name}:\\s*(.*)$`, 'im');
  return re.exec(head)?.[1]?.trim();
}

/**
 * One `GET /` on an already open connection (kept open: tests hold it across a certificate
 * swap); resolves with the response's status line once its body (Content-Length) is in.
 */
export function requestOnSocket(s: Duplex, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? '0');
      if (got.length < end + 4 + len) return;
      s.removeListener('data', onData);
      resolve(got.slice(0, got.indexOf('\r\n')));
    };
    s.on('data', onData);
    s.once('error', reject);
    s.write(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  });
}
