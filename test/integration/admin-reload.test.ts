/**
 * A reload that changes the admin section (issue 19 item 7), on the real CLI: a new
 * `admin.address` rebinds (via SIGHUP and via POST /reload), an address that cannot be bound
 * refuses the reload naming `admin.address` and keeps the old listener, `token` applies at once,
 * and adding or removing the admin section is refused as needing a restart.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { eventually, tempDir } from '../harness/router.ts';

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** One admin request: the status and body, or 0 when the port refuses the connection. */
function call(port: number, method: string, path: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        path,
        method,
        agent: false,
        headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

it('rebinds a changed admin.address on SIGHUP and POST /reload; refuses what it cannot apply', async () => {
  const a = await startHttpBackend('a');
  const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${a.address}] }\n` });
  const file = join(dir, 'switchboard.yaml');
  const config = (admin: string | undefined) =>
    [
      'listeners: [{ name: web, address: 127.0.0.1:0 }]',
      'addressBook: { name: file, path: servers.yaml }',
      admin === undefined ? '' : `admin: ${admin}`,
      'limits: { drainTimeout: 1s }',
      'log: { level: info, access: "off" }',
      '',
    ].join('\n');
  const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
  await writeFile(file, config(`{ address: "127.0.0.1:${p1}", token: one }`));
  const cli = spawnCli(file);
  const busy = createServer();
  try {
    await cli.waitForLog((l) => l.msg === 'switchboard started');
    expect((await call(p1, 'GET', '/version', 'one')).status).toBe(200);

    // SIGHUP: the listener moves to p2.
    await writeFile(file, config(`{ address: "127.0.0.1:${p2}", token: one }`));
    cli.kill('SIGHUP');
    await cli.waitForLog((l) => l.msg === 'admin listener moved' && l.admin === `127.0.0.1:${p2}`);
    expect((await call(p2, 'GET', '/version', 'one')).status).toBe(200);
    await eventually(async () => (await call(p1, 'GET', '/version', 'one')).status === 0, 5_000, 'p1 closed');

    // POST /reload on p2: the listener moves to p3 and the new token applies at once.
    await writeFile(file, config(`{ address: "127.0.0.1:${p3}", token: two }`));
    const moved = await call(p2, 'POST', '/reload', 'one');
    expect({ status: moved.status, ok: JSON.parse(moved.body).ok }).toEqual({ status: 200, ok: true });
    expect((await call(p3, 'GET', '/version', 'two')).status).toBe(200);
    expect((await call(p3, 'GET', '/version', 'one')).status).toBe(401);
    await eventually(async () => (await call(p2, 'GET', '/version', 'two')).status === 0, 5_000, 'p2 closed');

    // An address that cannot be bound refuses the reload; p3 keeps serving.
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const taken = (busy.address() as AddressInfo).port;
    await writeFile(file, config(`{ address: "127.0.0.1:${taken}", token: two }`));
    const refused = await call(p3, 'POST', '/reload', 'two');
    expect(refused.status).toBe(422);
    expect(JSON.parse(refused.body).errors.join('\n')).toMatch(
      new RegExp(`^admin\\.address: 127\\.0\\.0\\.1:${taken} is in use \\(EADDRINUSE\\)`),
    );
    expect((await call(p3, 'GET', '/version', 'two')).status).toBe(200);

    // Removing the admin section needs a restart (SIGHUP: logged, config unchanged).
    await writeFile(file, config(undefined));
    cli.kill('SIGHUP');
    const failed = await cli.waitForLog(
      (l) => l.msg === 'reload failed; config unchanged' && String(l.errors).includes('removing'),
    );
    expect(failed.errors).toEqual(['admin: removing the admin section needs a restart']);
    expect((await call(p3, 'GET', '/version', 'two')).status).toBe(200);
  } finally {
    cli.kill('SIGTERM');
    await cli.exited;
    await new Promise<void>((r) => (busy.listening ? busy.close(() => r()) : r()));
    await a.close();
  }
}, 30_000);
