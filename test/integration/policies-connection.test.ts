/**
 * Policies at the `connection` point (issue 42 step 2), through the real router: the listener
 * pipeline closes a blocked client before a byte is read, holds an in-flight slot until the
 * connection ends, counts a rate limit once across worker threads; an answer at the connection
 * point is refused by config load, and a bad rule refuses the reload and keeps the old set.
 */
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { validateConfig } from '../../app/load-config.ts';
import { ConfigError } from '../../src/config/errors.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const WILDCARD = [{ name: 'web', address: '0.0.0.0:0' }];

/** One GET over a connection from `from`; resolves with the reply ('' when closed unanswered). */
function get(port: number, from = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    s.on('error', () => {});
    s.once('close', () => resolve(data));
    s.write('GET / HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n');
  });
}

/** A connection that sends nothing: held open until destroyed. */
function hold(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.on('error', () => {});
    s.once('connect', () => resolve(s));
  });
}

describe('policies at the connection point', () => {
  let backend: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
    router = undefined;
    backend = undefined;
  });

  async function start(policies: unknown[], panel: unknown = 'net', files: Record<string, string> = {}) {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n`, ...files });
    router = await startTestRouter(
      { panel, listeners: WILDCARD, addressBook: { name: 'file', path: 'servers.yaml' }, policies },
      { dir },
    );
    return router;
  }

  for (const panel of ['net', { name: 'worker', threads: 2 }]) {
    const label = typeof panel === 'string' ? panel : 'worker';
    it(`${label}: a blocked client is closed at accept, nothing forwarded; another is served`, async () => {
      const r = await start(
        [{ name: 'deny', use: 'block', point: 'connection', options: { cidrs: ['127.0.0.2/32'] } }],
        panel,
      );
      expect(await get(r.port(), '127.0.0.2')).toBe('');
      expect(backend?.hits).toBe(0);
      expect(await get(r.port(), '127.0.0.1')).toContain('200 OK');
      await eventually(() => r.access.some((a) => a.policy === 'deny'));
      const line = r.access.find((a) => a.policy === 'deny');
      expect(line).toMatchObject({ result: 'policy_closed', action: 'close', bytesOut: 0 });
    });
  }

  it('visible: the metrics count the action by rule and GET /policies lists the rules with their counts', async () => {
    backend = await startHttpBackend('a');
    const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    router = await startTestRouter(
      {
        listeners: WILDCARD,
        admin: { address: '127.0.0.1:0' },
        addressBook: { name: 'file', path: 'servers.yaml' },
        policies: [
          { name: 'deny', use: 'block', point: 'connection', options: { cidrs: ['127.0.0.2/32'] } },
          { name: 'conns', use: 'in-flight', point: 'connection', options: { max: 100 } },
        ],
      },
      { dir },
    );
    const r = router;
    expect(await get(r.port(), '127.0.0.2')).toBe('');
    await eventually(() => r.access.some((a) => a.policy === 'deny'));
    const admin = `http://127.0.0.1:${r.router.admin?.address().port}`;
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_policy_actions_total\{policy="deny",action="close"\} 1/);
    const view = (await (await fetch(`${admin}/policies`)).json()) as { policies: unknown[] };
    expect(view.policies).toEqual([
      { name: 'deny', use: 'block', point: 'connection', actions: { close: 1 } },
      { name: 'conns', use: 'in-flight', point: 'connection', actions: {}, keys: 0 },
    ]);
  });

  it('in-flight of connections: 2 held pass, the rest are closed; a released hold lets the next in', async () => {
    const r = await start([{ name: 'two', use: 'in-flight', point: 'connection', options: { max: 2 } }]);
    const held = [await hold(r.port()), await hold(r.port())];
    expect(await get(r.port())).toBe('');
    for (const s of held) s.destroy();
    await eventually(async () => (await get(r.port())).includes('200 OK'), 5_000, 'the holds given back');
  });

  it('worker, 2 threads: a connection rate limit of burst 6 passes 6 in total, not 6 per thread', async () => {
    const r = await start(
      [{ name: 'rate', use: 'rate-limit', point: 'connection', options: { rate: '1/m', burst: 6 } }],
      { name: 'worker', threads: 2 },
    );
    const replies = await Promise.all(Array.from({ length: 20 }, () => get(r.port())));
    expect(replies.filter((x) => x.includes('200 OK')).length).toBe(6);
  });

  it('an answer at the connection point is refused naming the rule (no request to answer yet)', async () => {
    const dir = await tempDir();
    const config = {
      listeners: WILDCARD,
      policies: [
        { name: 'deny', use: 'block', options: { cidrs: ['10.0.0.0/8'] } },
        { name: 'admin-internal', use: 'block', point: 'connection', action: { respond: 403 } },
      ],
    };
    const file = join(dir, 'switchboard.yaml');
    const e = await validateConfig(config, file, stringify(config)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).toContain(
      'policies[1] (admin-internal): action: respond needs the request point or later; the rule runs at connection',
    );
  });

  it('an unknown policy module is refused with the plugin error', async () => {
    const dir = await tempDir();
    const config = { listeners: WILDCARD, policies: [{ name: 'x', use: './nope.ts' }] };
    const e = await validateConfig(config, join(dir, 's.yaml'), stringify(config)).catch((x: unknown) => x);
    expect((e as Error).message).toContain('policies[0] (x).use: cannot load policy module');
  });

  it('a bad rule refuses the reload and keeps the last good set; an unchanged rate rule keeps its count', async () => {
    const rate = { name: 'rate', use: 'rate-limit', point: 'connection', options: { rate: '1/m', burst: 2 } };
    const r = await start([rate]);
    expect(await get(r.port())).toContain('200 OK');
    const file = join(r.dir, 'switchboard.yaml');
    const base = {
      listeners: WILDCARD,
      addressBook: { name: 'file', path: 'servers.yaml' },
      limits: { drainTimeout: '1s' },
    };
    await writeFile(
      file,
      stringify({ ...base, policies: [rate, { name: 'bad', use: 'block', options: { cidrs: ['x'] } }] }),
    );
    const bad = await r.router.reload();
    expect(bad.ok).toBe(false);
    const before = r.router.runtime.engine.policies;
    expect(before.rules.map((x) => x.name)).toEqual(['rate']);
    // Unchanged rule, another one added: the burst already spent stays spent.
    await writeFile(
      file,
      stringify({ ...base, policies: [rate, { name: 'noop', use: 'block', options: { cidrs: ['10.9.9.9/32'] } }] }),
    );
    expect((await r.router.reload()).ok).toBe(true);
    expect(r.router.runtime.engine.policies).not.toBe(before);
    expect(await get(r.port())).toContain('200 OK');
    expect(await get(r.port())).toBe('');
  });
});
