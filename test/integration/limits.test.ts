/**
 * Limits (issue 7 §3): per-client and per-listener caps, idle timeout, maximum lifetime, the
 * nofile check, and running out of descriptors under a low `ulimit -n` (real CLI, child process).
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkNofile, maxConnectionsFor, NOFILE_RESERVE } from '../../src/process/nofile.ts';
import { startHttpBackend, startTcpBackend, type TcpBackend, type TestBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { httpGet } from '../harness/http.ts';
import { parsePrometheus, sum } from '../harness/prometheus.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

/** Sends one keep-alive request on `s` and resolves with the status line ('' if closed first). */
function ask(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (c: Buffer) => {
      text += c.toString('latin1');
      if (/\r\n\r\n/.test(text) && /Content-Length: (\d+)/i.test(text)) finish();
    };
    const finish = () => {
      s.off('data', onData);
      s.off('close', finish);
      resolve(text.split('\r\n')[0] ?? '');
    };
    s.on('data', onData);
    s.once('close', finish);
    s.on('error', () => {});
    s.write('GET / HTTP/1.1\r\nHost: www.example.test\r\n\r\n');
  });
}

describe('connection limits', () => {
  let a: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    router = await startTestRouter(
      {
        listeners: [
          { name: 'web', address: '127.0.0.1:0' },
          { name: 'small', address: '127.0.0.1:0', maxConnections: 1 },
        ],
        addressBook: { name: 'file', path: 'servers.yaml' },
        limits: { maxConnectionsPerClient: 2 },
      },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${a.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await a.close();
  });

  it('maxConnectionsPerClient: the third connection from one IP is closed and logged overloaded', async () => {
    const first = await open(router.port('web'));
    const second = await open(router.port('web'));
    const third = await open(router.port('web'));
    await closed(third);
    await eventually(() => router.access.some((r) => r.result === 'overloaded' && r.listener === 'web'));
    first.destroy();
    await closed(first);
    await eventually(async () => (await httpGet(router.port('web'))).status === 200, 5_000, 'a slot freed');
    second.destroy();
  });

  it('per-listener maxConnections caps that listener only', async () => {
    const held = await open(router.port('small'));
    const refused = await open(router.port('small'));
    await closed(refused);
    await eventually(() => router.access.some((r) => r.result === 'overloaded' && r.listener === 'small'));
    expect((await httpGet(router.port('web'))).status).toBe(200);
    held.destroy();
  });
});

describe('timeouts', () => {
  let silent: TcpBackend;
  let chatty: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    silent = await startTcpBackend('silent');
    // Answers a head, then trickles bytes forever: never idle, so only the lifetime ends it.
    chatty = await startTcpBackend('chatty', (s) => {
      s.once('data', () => {
        s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        const t = setInterval(() => s.write('1\r\nx\r\n'), 50);
        s.once('close', () => clearInterval(t));
      });
    });
    router = await startTestRouter(
      {
        listeners: [
          { name: 'idle', address: '127.0.0.1:0' },
          { name: 'life', address: '127.0.0.1:0' },
        ],
        addressBook: { name: 'file', path: 'servers.yaml' },
        limits: { idleTimeout: '300ms', maxConnectionLifetime: '700ms' },
      },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: silent.test, backends: [${silent.address}] }`,
            `- { host: chatty.test, backends: [${chatty.address}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([silent.close(), chatty.close()]);
  });

  it('idleTimeout closes a spliced connection nobody speaks on, logged idle_timeout', async () => {
    const s = await open(router.port('idle'));
    s.on('error', () => {});
    s.write('GET / HTTP/1.1\r\nHost: silent.test\r\n\r\n');
    await closed(s);
    await eventually(() => router.access.some((r) => r.result === 'idle_timeout' && r.host === 'silent.test'));
  });

  it('maxConnectionLifetime closes a busy connection', async () => {
    const s = await open(router.port('life'));
    s.on('error', () => {});
    let received = 0;
    s.on('data', (c) => (received += c.length));
    s.write('GET / HTTP/1.1\r\nHost: chatty.test\r\n\r\n');
    await closed(s);
    expect(received).toBeGreaterThan(0);
    await eventually(() => router.access.some((r) => r.host === 'chatty.test'));
    const rec = router.access.find((r) => r.host === 'chatty.test')!;
    expect(rec.durationMs).toBeGreaterThanOrEqual(600);
  });
});

describe('nofile', () => {
  // More rows (routing, maxIdleUpstreamsPerConnection): test/unit/nofile.test.ts.
  it.each([
    [64, 16, true],
    [64, 17, false],
    [20_000, 4096, true],
  ])(
    'nofile %i, maxConnections %i → fits %s (per-connection: 2 descriptors per connection + reserve)',
    (nofile, max, fits) => {
      const config = {
        routing: 'per-connection' as const,
        limits: { maxConnections: max, maxIdleUpstreamsPerConnection: 2 },
      };
      expect(maxConnectionsFor(nofile) >= max).toBe(fits);
      if (fits) expect(() => checkNofile('f.yaml', config, nofile)).not.toThrow();
      else expect(() => checkNofile('f.yaml', config, nofile)).toThrow(/limits\.maxConnections: /);
      expect(NOFILE_RESERVE).toBeGreaterThan(0);
    },
  );

  it('a maxConnections above the process limit is a config error at start', async () => {
    await expect(
      startTestRouter({ addressBook: { name: 'file', path: 'x.yaml' }, limits: { maxConnections: 10_000_000 } }),
    ).rejects.toMatchObject({
      code: 'SWB_ERR_CONFIG',
      message: expect.stringMatching(/limits\.maxConnections: 10000000 connections need/),
    });
  });
});

describe('out of descriptors (ulimit -n 64, real CLI)', () => {
  it('keeps serving what it has, reports the shedding, recovers when descriptors free up', async () => {
    const backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const file = join(dir, 'switchboard.yaml');
    await writeFile(
      file,
      [
        'listeners: [{ name: web, address: 127.0.0.1:0 }]',
        'addressBook: { name: file, path: servers.yaml, watch: false }',
        // Idle admin connections stand for whatever else holds descriptors: no per-client cap here.
        'admin: { address: 127.0.0.1:0, maxConnectionsPerClient: 0 }',
        // 2 descriptors per connection (no idle upstreams kept) and the admin's 64: 16 × 2 + 32 + 64 = 128.
        'limits: { maxConnections: 16, maxIdleUpstreamsPerConnection: 0, drainTimeout: 1s }',
        'log: { access: "off" }',
      ].join('\n'),
    );
    const cli = spawnCli(file, { ulimit: 128 });
    const sockets: Socket[] = [];
    try {
      const started = await cli.waitForLog((l) => l.msg === 'switchboard started');
      expect(started.nofile).toBe(128);
      // The budget fits (the admin listener is counted, issue 39): run out anyway by lowering the
      // running process's soft limit to 64, as a shrunken limit or a descriptor leak would.
      execFileSync('prlimit', ['--pid', String(cli.child.pid), '--nofile=64:128']);
      const web = await cli.port('web');
      const admin = Number(String(started.admin).split(':').pop());
      // Something else holds descriptors (idle admin connections): 16 proxied connections no longer fit.
      const idleAdmin: Socket[] = [];
      for (let i = 0; i < 14; i++) idleAdmin.push(await open(admin));
      const served: Socket[] = [];
      const shed: string[] = [];
      for (let i = 0; i < 16; i++) {
        let s: Socket;
        try {
          s = await open(web);
        } catch (e) {
          shed.push((e as Error).message);
          continue;
        }
        sockets.push(s);
        const status = await ask(s);
        if (status.startsWith('HTTP/1.1 200')) served.push(s);
        else shed.push(status || 'closed');
      }
      expect(served.length).toBeGreaterThan(0);
      expect(shed.length).toBeGreaterThan(0);
      await cli.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('out of file descriptors'));
      // The connections it has keep working.
      for (const s of served) expect(await ask(s)).toMatch(/^HTTP\/1\.1 200/);
      // Free descriptors: new connections are served again, and the metric shows the shedding.
      for (const s of idleAdmin) s.destroy();
      for (const s of served.splice(0, 4)) s.destroy();
      await eventually(
        async () => {
          try {
            return (await httpGet(web)).status === 200;
          } catch {
            return false;
          }
        },
        10_000,
        'serving again',
      );
      const text = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
      expect(sum(parsePrometheus(text), 'switchboard_fd_exhausted_total')).toBeGreaterThan(0);
      expect(sum(parsePrometheus(text), 'switchboard_backend_up', { backend: backend.address })).toBe(1);
    } finally {
      for (const s of sockets) s.destroy();
      cli.kill('SIGTERM');
      await cli.exited;
      await backend.close();
    }
  });
});
