/**
 * The per-request floor row of the bench (bench/lib/per-request-pipe-server.ts): every head of a
 * keep-alive connection goes through llhttp, requests and responses are framed by
 * Content-Length, one upstream connection serves the client connection, a head sent before the
 * previous response is held until it is complete, and a head it refuses (llhttp's refusal, a
 * Transfer-Encoding) closes the connection.
 * Behaviour only, never speed (STYLE §20).
 */
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSpawner, freePort, waitForPort } from '../../bench/lib/proc.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';

const SCRIPT = join(import.meta.dirname, '..', '..', 'bench', 'lib', 'per-request-pipe-server.ts');
const spawn = createSpawner();
let backend: TestBackend | undefined;

afterEach(async () => {
  await spawn.stopAll();
  await backend?.close();
});

/** The backend answers with the upstream connection's port and the body length it read. */
async function start(): Promise<number> {
  backend = await startHttpBackend('b', (req, res) => {
    let length = 0;
    req.on('data', (d: Buffer) => {
      length += d.length;
    });
    req.on('end', () => {
      const body = JSON.stringify({ upstream: req.socket.remotePort, length, url: req.url });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  const port = await freePort();
  const child = spawn.start(process.execPath, [SCRIPT, String(port), String(backend.port)]);
  await waitForPort(port, child, 'per-request-pipe');
  return port;
}

/** Reads `count` Content-Length framed responses from `socket`, resolving their JSON bodies. */
function responses(socket: Socket, count: number): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const out: Record<string, unknown>[] = [];
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed after ${out.length} responses`)));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buf.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        out.push(JSON.parse(buf.subarray(end + 4, end + 4 + length).toString()) as Record<string, unknown>);
        buf = buf.subarray(end + 4 + length);
        if (out.length === count) resolve(out);
      }
    });
  });
}

describe('bench per-request floor row (per-request-pipe-server.ts)', () => {
  it('frames every request and response of a keep-alive connection over one upstream connection', async () => {
    const port = await start();
    const socket = connect({ port, host: '127.0.0.1' });
    const answers = responses(socket, 3);
    // A head split over reads, then a body by Content-Length and a head sent before its answer.
    const first = 'GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n';
    for (let i = 0; i < first.length; i += 7) {
      socket.write(first.slice(i, i + 7));
      await new Promise((r) => setTimeout(r, 5));
    }
    socket.write(
      'POST /two HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhelloGET /three HTTP/1.1\r\nHost: a.test\r\n\r\n',
    );
    const got = await answers;
    socket.destroy();
    expect(got.map((a) => a.url)).toEqual(['/one', '/two', '/three']);
    expect(got.map((a) => a.length)).toEqual([0, 5, 0]);
    expect(new Set(got.map((a) => a.upstream)).size).toBe(1);
    expect(backend!.hits).toBe(3);
  }, 20_000);

  it('closes on a Transfer-Encoding it does not frame, without reaching the backend', async () => {
    const port = await start();
    const head = 'POST /te HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n';
    const answer = await rawRequest(port, head);
    expect(answer.toString('latin1')).toBe('');
    expect(backend!.hits).toBe(0);
  }, 20_000);

  it('closes on a head llhttp refuses, without reaching the backend', async () => {
    const port = await start();
    const answer = await rawRequest(port, 'NOT A REQUEST\r\n\r\n');
    expect(answer.toString('latin1')).toBe('');
    expect(backend!.hits).toBe(0);
  }, 20_000);
});
