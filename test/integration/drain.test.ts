/**
 * Graceful shutdown (issue 7 §4): /readyz fails while draining, a slow response in flight
 * completes, idle connections close at once, new connections are refused, drainable connections
 * are asked to stop, and `kill -TERM` on the real CLI lets a slow response finish and exits 0.
 */
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DrainSet } from '../../src/data-path/drain.ts';
import { type HttpHandler, startHttpBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';

/** Answers after `release()` is called (or at once once released). */
function gated(): { handler: HttpHandler; release(): void; waiting(): number } {
  let open = false;
  const queue: (() => void)[] = [];
  return {
    handler: (_req, res) => {
      const answer = () => res.writeHead(200, { 'content-length': 4 }).end('slow');
      if (open) answer();
      else queue.push(answer);
    },
    release() {
      open = true;
      for (const f of queue.splice(0)) f();
    },
    waiting: () => queue.length,
  };
}

describe('DrainSet', () => {
  it('drains registered members once, skips unregistered ones, and drains late joiners at once', () => {
    const set = new DrainSet();
    const calls: string[] = [];
    const off = set.register({ drain: () => calls.push('a') });
    set.register({ drain: () => calls.push('b') });
    off();
    set.drainAll();
    expect(calls).toEqual(['b']);
    expect(set.draining).toBe(true);
    set.register({ drain: () => calls.push('late') });
    expect(calls).toEqual(['b', 'late']);
  });

  it('add/remove: the same without an unregister closure', () => {
    const set = new DrainSet();
    const calls: string[] = [];
    const a = set.add({ drain: () => calls.push('a') });
    set.add({ drain: () => calls.push('b') });
    set.remove(a);
    set.remove(a); // a second remove does nothing
    expect(set.size).toBe(1);
    set.drainAll();
    expect(calls).toEqual(['b']);
    expect(set.add({ drain: () => calls.push('late') })).toBeUndefined();
    expect(calls).toEqual(['b', 'late']);
    expect(set.size).toBe(0);
  });
});

describe('graceful close (in process)', () => {
  it('fails /readyz, refuses new connections, closes idle ones, and completes a slow response', async () => {
    const gate = gated();
    const backend = await startHttpBackend('slow', gate.handler);
    const router = await startTestRouter(
      {
        addressBook: { name: 'file', path: 'servers.yaml' },
        admin: { address: '127.0.0.1:0' },
        limits: { drainTimeout: '20s' },
      },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` }) },
    );
    const admin = router.router.admin!.address().port;
    const port = router.port();
    const idle: Socket = connect({ port, host: '127.0.0.1' });
    idle.on('error', () => {});
    await new Promise<void>((r) => idle.once('connect', () => r()));
    const inFlight = httpGet(port);
    await eventually(() => gate.waiting() === 1, 10_000, 'the request at the backend');

    const closing = router.router.close();
    const ready = await fetch(`http://127.0.0.1:${admin}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toBe('draining\n');
    await new Promise<void>((r) => (idle.destroyed ? r() : idle.once('close', () => r())));
    await expect(httpGet(port)).rejects.toThrow(/ECONNREFUSED|ECONNRESET/);

    gate.release();
    expect(await inFlight).toMatchObject({ status: 200, body: 'slow' });
    await closing;
    await backend.close();
  });

  it('asks registered drainable connections to close, and destroys tunnels at drainTimeout', async () => {
    const backend = await startHttpBackend('never', () => {});
    const router = await startTestRouter(
      { addressBook: { name: 'file', path: 'servers.yaml' }, limits: { drainTimeout: '300ms' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` }) },
    );
    const drained: string[] = [];
    router.router.runtime.drain.register({ drain: () => drained.push('asked') });
    const stuck = httpGet(router.port()).catch((e: Error) => e.message);
    await eventually(() => backend.hits === 1, 10_000, 'the request at the backend');
    await router.close();
    expect(drained).toEqual(['asked']);
    expect(await stuck).toMatch(/socket hang up|ECONNRESET/);
    await backend.close();
  });
});

describe('kill -TERM on the real CLI', () => {
  it('lets a slow response finish, then exits 0', async () => {
    const gate = gated();
    const backend = await startHttpBackend('slow', gate.handler);
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const file = join(dir, 'switchboard.yaml');
    await writeFile(
      file,
      [
        'listeners: [{ name: web, address: 127.0.0.1:0 }]',
        'addressBook: { name: file, path: servers.yaml }',
        'limits: { drainTimeout: 20s }',
        'log: { access: "off" }',
      ].join('\n'),
    );
    const cli = spawnCli(file);
    try {
      const port = await cli.port('web');
      const inFlight = httpGet(port);
      await eventually(() => gate.waiting() === 1, 10_000, 'the request at the backend');
      cli.kill('SIGTERM');
      await cli.waitForLog((l) => l.msg === 'draining, then shutting down');
      gate.release();
      expect(await inFlight).toMatchObject({ status: 200, body: 'slow' });
      expect(await cli.exited).toBe(0);
    } finally {
      cli.kill('SIGKILL');
      await backend.close();
    }
  });
});
