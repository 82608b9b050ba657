/**
 * The newconn floor rows of the bench (bench/lib/peek-pipe-server.ts): `node-peek-pipe` forwards
 * the first read and pipes; `node-peek-parse-pipe` waits for the whole head, runs llhttp once
 * and closes on a head llhttp refuses. Behaviour only, never speed (STYLE §20).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSpawner, freePort, waitForPort } from '../../bench/lib/proc.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';

const SCRIPT = join(import.meta.dirname, '..', '..', 'bench', 'lib', 'peek-pipe-server.ts');
const spawn = createSpawner();
let backend: TestBackend | undefined;

afterEach(async () => {
  await spawn.stopAll();
  await backend?.close();
});

async function start(parse: boolean): Promise<number> {
  backend = await startHttpBackend('b');
  const port = await freePort();
  const child = spawn.start(process.execPath, [
    SCRIPT,
    String(port),
    String(backend.port),
    ...(parse ? ['parse'] : []),
  ]);
  await waitForPort(port, child, 'peek-pipe');
  return port;
}

async function exchange(port: number, head: string, chunkSize?: number): Promise<string> {
  const options = chunkSize === undefined ? {} : { chunkSize, delayMs: 20 };
  return (await rawRequest(port, head, options)).toString('latin1');
}

const REQUEST = 'GET /x HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n';

describe('bench newconn floor rows (peek-pipe-server.ts)', () => {
  it('node-peek-pipe: the first read goes to the backend, then both ways', async () => {
    const port = await start(false);
    const answer = await exchange(port, REQUEST);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(backend!.hits).toBe(1);
  }, 20_000);

  it('node-peek-parse-pipe: a head split over reads is gathered, parsed and forwarded', async () => {
    const port = await start(true);
    const answer = await exchange(port, REQUEST, 10);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(backend!.hits).toBe(1);
  }, 20_000);

  it('node-peek-parse-pipe: a head llhttp refuses is closed without reaching the backend', async () => {
    const port = await start(true);
    const answer = await exchange(port, 'NOT A REQUEST\r\n\r\n');
    expect(answer).toBe('');
    expect(backend!.hits).toBe(0);
  }, 20_000);
});
