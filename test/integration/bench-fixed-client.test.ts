/**
 * bench/lib/fixed-client.ts with a list of ports (cost.ts `--paired`): every port gets its own
 * TOTAL requests on CONNS connections, all at once, and the client exits once all are in.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';

const CLIENT = join(import.meta.dirname, '..', '..', 'bench', 'lib', 'fixed-client.ts');
const backends: TestBackend[] = [];

afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [CLIENT, ...args], { timeout: 15_000 }, (err, out) =>
      err ? reject(err) : resolve(out),
    ),
  );
}

describe('bench fixed-count client', () => {
  it('sends TOTAL new-connection requests to each of several ports', async () => {
    const body = 'hello world\n';
    for (const name of ['a', 'b']) backends.push(await startHttpBackend(name, (_req, res) => res.end(body)));
    const out = await run([backends.map((b) => b.port).join(','), 'newconn', '3', '7']);
    expect(Number(out.trim())).toBeGreaterThan(0);
    expect(backends.map((b) => b.hits)).toEqual([7, 7]);
  }, 20_000);
});
