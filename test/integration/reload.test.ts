/**
 * Hot reload of the whole config (issue 7 §1): under load with valid and invalid changes, the
 * no-op for identical text, backend state kept, listeners added, moved and removed, and SIGHUP
 * on the real CLI.
 */
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Router, startRouter } from '../../app/start.ts';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, tempDir } from '../harness/router.ts';

function configText(book: string, extra = ''): string {
  return [
    'listeners:',
    '  - { name: web, address: 127.0.0.1:0 }',
    extra,
    'operator: round-robin',
    `addressBook: { name: file, path: ${book} }`,
    'limits: { drainTimeout: 1s }',
    'log: { level: silent, access: "off" }',
    '',
  ].join('\n');
}

async function backendOf(port: number): Promise<string> {
  const res = await httpGet(port);
  return (JSON.parse(res.body) as { backend: string }).backend;
}

describe('reload', () => {
  let a: TestBackend;
  let b: TestBackend;
  let dir: string;
  let file: string;
  let router: Router;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    b = await startHttpBackend('b');
    dir = await tempDir({
      'a.yaml': `- { host: "*", backends: [${a.address}] }\n`,
      'b.yaml': `- { host: "*", backends: [${b.address}] }\n`,
    });
    file = join(dir, 'switchboard.yaml');
    await writeFile(file, configText('a.yaml'));
    router = await startRouter(file, {}, { logger: createLogger('silent'), accessLog: () => {} });
    router.reloader.watch(100);
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([a.close(), b.close()]);
  });

  const port = () => router.panel.addresses().web!.port;

  it('under load: 10 changes (valid and invalid alternately), zero failed requests, each valid one visible within a second', async () => {
    let stop = false;
    let sent = 0;
    const failures: string[] = [];
    const loop = async () => {
      while (!stop) {
        try {
          const res = await httpGet(port());
          if (res.status !== 200) failures.push(`status ${res.status}: ${res.body}`);
        } catch (e) {
          failures.push((e as Error).message);
        }
        sent++;
      }
    };
    const clients = [loop(), loop(), loop(), loop()];
    let expect_ = 'a';
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const valid = i % 2 === 0;
      const before = router.runtime.engine.version;
      if (valid) {
        expect_ = expect_ === 'a' ? 'b' : 'a';
        // A comment makes each valid text unique, so each is a real change.
        await writeFile(file, `${configText(`${expect_}.yaml`)}# change ${i}\n`);
        const t0 = Date.now();
        // The target is a second (watch polling + rebuild); the limit is generous so load never decides.
        await eventually(async () => (await backendOf(port())) === expect_, 5_000, `change ${i} visible`);
        delays.push(Date.now() - t0);
        expect(router.runtime.engine.version).not.toBe(before);
      } else {
        await writeFile(
          file,
          configText(`${expect_}.yaml`).replace('drainTimeout: 1s', `drainTimeout: 1s, bogus${i}: 1`),
        );
        // The failed reload must not change what serves: keep checking for a while.
        const until = Date.now() + 400;
        while (Date.now() < until) expect(await backendOf(port())).toBe(expect_);
        expect(router.runtime.engine.version).toBe(before);
      }
    }
    stop = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(50);
    expect(delays).toHaveLength(5);
    // The remaining tests reload explicitly; a watcher racing them would make `changed` vary.
    router.reloader.close();
  });

  it('an identical config is a no-op; a failed reload reports every error with its path and changes nothing', async () => {
    const before = router.runtime.engine.version;
    await writeFile(file, router.runtime.engine.loaded.text);
    const same = await router.reload();
    expect(same).toMatchObject({ ok: true, changed: false, version: before });

    const text = configText('b.yaml').replace('drainTimeout: 1s', 'drainTimeout: 1s, idleTimeout: soon, bogus: 1');
    await writeFile(file, text);
    const failed = await router.reload();
    expect(failed.ok).toBe(false);
    expect(failed.version).toBe(before);
    expect(failed.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^limits\.idleTimeout: /)]));
    expect(failed.errors).toEqual(expect.arrayContaining(['limits.bogus: unknown key']));
    expect(router.runtime.engine.version).toBe(before);
    expect(await httpGet(port()).then((r) => r.status)).toBe(200);
  });

  it('keeps backend state for backends that survive a reload', async () => {
    await writeFile(file, configText('a.yaml'));
    await router.reload();
    await httpGet(port());
    const totalBefore = router.runtime.registry.peek(a.address)?.total ?? 0;
    expect(totalBefore).toBeGreaterThan(0);
    await writeFile(file, `${configText('a.yaml')}# same backends, new text\n`);
    const r = await router.reload();
    expect(r).toMatchObject({ ok: true, changed: true });
    expect(router.runtime.registry.peek(a.address)?.total).toBe(totalBefore);
  });

  it('adds, moves and removes listeners; a connection on an unchanged listener survives', async () => {
    await writeFile(file, configText('a.yaml'));
    await router.reload();
    const webPort = port();
    // A request held open across the reloads on the unchanged listener.
    const held = connect({ port: webPort, host: '127.0.0.1' });
    const gotData = new Promise<string>((resolve) => {
      let text = '';
      held.on('data', (c) => {
        text += c.toString('latin1');
        if (text.includes('"backend"')) resolve(text);
      });
    });
    await new Promise<void>((r) => held.once('connect', () => r()));

    await writeFile(file, configText('a.yaml', '  - { name: extra, address: 127.0.0.1:0 }'));
    expect(await router.reload()).toMatchObject({ ok: true, changed: true });
    const extra = router.panel.addresses().extra;
    expect(extra).toBeDefined();
    expect(port()).toBe(webPort);
    expect((await httpGet(extra!.port)).status).toBe(200);

    await writeFile(file, configText('a.yaml'));
    expect(await router.reload()).toMatchObject({ ok: true, changed: true });
    expect(router.panel.addresses().extra).toBeUndefined();
    await expect(httpGet(extra!.port)).rejects.toThrow(/ECONNREFUSED/);

    held.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(await gotData).toMatch(/^HTTP\/1\.1 200/);
    held.destroy();
    expect(port()).toBe(webPort);
  });

  it('a listener that cannot bind fails the reload and leaves the others serving', async () => {
    const taken = router.panel.addresses().web!.port;
    await writeFile(file, configText('a.yaml', `  - { name: clash, address: 127.0.0.1:${taken} }`));
    const r = await router.reload();
    expect(r.ok).toBe(false);
    expect(r.errors.join('\n')).toMatch(/listeners\[1\]\.address: 127\.0\.0\.1:\d+ is in use \(EADDRINUSE\)/);
    expect(router.panel.addresses().clash).toBeUndefined();
    expect((await httpGet(port())).status).toBe(200);
  });
});

describe('reload on SIGHUP (real CLI in a child process)', () => {
  it('switches backends on SIGHUP and logs the new version', async () => {
    const a = await startHttpBackend('a');
    const b = await startHttpBackend('b');
    const dir = await tempDir({
      'a.yaml': `- { host: "*", backends: [${a.address}] }\n`,
      'b.yaml': `- { host: "*", backends: [${b.address}] }\n`,
    });
    const file = join(dir, 'switchboard.yaml');
    const text = (book: string) => configText(book).replace('level: silent', 'level: info');
    await writeFile(file, text('a.yaml'));
    const cli = spawnCli(file);
    try {
      const web = await cli.port('web');
      expect(await backendOf(web)).toBe('a');
      // Change the file without waiting for the watcher, then signal.
      await writeFile(file, text('b.yaml'));
      cli.kill('SIGHUP');
      const line = await cli.waitForLog((l) => l.msg === 'config reloaded');
      expect(typeof line.version).toBe('string');
      await eventually(async () => (await backendOf(web)) === 'b', 5_000, 'backend b after SIGHUP');
    } finally {
      cli.kill('SIGTERM');
      await cli.exited;
      await Promise.all([a.close(), b.close()]);
    }
  });
});
