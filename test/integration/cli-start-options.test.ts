/**
 * `switchboard start`'s process options through the real CLI (issue 45 items 4 and 8):
 * `--pid-file` (a stale file replaced, written once listening, a second start on a live one
 * refused before it binds, removed at exit), `--no-watch` (an edit does not reload; SIGHUP and
 * POST /reload do), an admin port in use failing the start before any listener logs
 * `listening`, and a bad option value being a usage error (exit 2) wherever the CLI parses one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliRouter, spawnCli } from '../harness/cli.ts';
import { runCli, STACK } from '../harness/cli-run.ts';
import { tempDir } from '../harness/router.ts';

const held: Server[] = [];
const routers: CliRouter[] = [];
afterAll(async () => {
  for (const r of routers) r.kill('SIGKILL');
  for (const s of held) s.close();
});

/** A config on port 0 whose book is a file (nothing needs to answer), with `extra` appended. */
async function configFile(extra = ''): Promise<{ dir: string; file: string; text: (more?: string) => string }> {
  const text = (more = '') =>
    [
      'listeners: [{ name: web, address: 127.0.0.1:0 }]',
      'addressBook: { name: file, path: servers.yaml }',
      'limits: { drainTimeout: 1s }',
      'log: { level: info, access: "off" }',
      extra,
      more,
      '',
    ].join('\n');
  const dir = await tempDir({
    'servers.yaml': '- { host: "*", backends: [127.0.0.1:9] }\n',
    'switchboard.yaml': text(),
  });
  return { dir, file: join(dir, 'switchboard.yaml'), text };
}

/** POST /reload on the admin listener: the status. */
function postReload(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json' };
    const req = request({ host: '127.0.0.1', port, path: '/reload', method: 'POST', agent: false, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('switchboard start', () => {
  it('--pid-file: a stale file replaced, the pid once listening, a second start refused, removed at exit', async () => {
    const { dir, file } = await configFile();
    const pidFile = join(dir, 'switchboard.pid');
    // No process has this pid (Linux's pid_max is at most 2^22): the file is stale.
    await writeFile(pidFile, '2147483646\n');
    const r = spawnCli(file, { args: ['--pid-file', pidFile] });
    routers.push(r);
    await r.waitForLog((l) => l.msg === 'switchboard started', 30_000);
    expect(r.logs.some((l) => l.msg === 'listening')).toBe(true);
    expect(readFileSync(pidFile, 'utf8')).toBe(`${r.child.pid}\n`);
    const second = await runCli(['start', '--config', file, '--pid-file', pidFile]);
    expect(second.code).toBe(1);
    expect(second.messages).toEqual([
      `--pid-file: ${pidFile} names process ${r.child.pid}, which is running (another router?); stop it or remove the file`,
    ]);
    expect(second.stderr).not.toContain('"msg":"listening"');
    r.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
  }, 60_000);

  it('--no-watch: an edit of the config file does not reload it; SIGHUP and POST /reload do', async () => {
    const { file, text } = await configFile('admin: { address: 127.0.0.1:0 }');
    const r = spawnCli(file, { args: ['--no-watch'] });
    routers.push(r);
    const started = await r.waitForLog((l) => l.msg === 'switchboard started', 30_000);
    const admin = Number(String(started.admin).split(':').pop());
    await r.waitForLog((l) => l.msg === 'config file not watched (--no-watch): reload with SIGHUP or POST /reload');
    const reloads = (trigger: string) => r.logs.filter((l) => l.msg === 'config reloaded' && l.trigger === trigger);
    await writeFile(file, text('# edited once'));
    // Nothing announces a reload that does not happen: eight of the watch's 250 ms polls pass.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(r.logs.filter((l) => String(l.msg).startsWith('config reloaded'))).toEqual([]);
    r.kill('SIGHUP');
    await r.waitForLog((l) => l.msg === 'config reloaded' && l.trigger === 'SIGHUP');
    await writeFile(file, text('# edited twice'));
    expect(await postReload(admin)).toBe(200);
    await r.waitForLog((l) => l.msg === 'config reloaded' && l.trigger === 'api');
    expect(reloads('watch')).toEqual([]);
    r.kill('SIGTERM');
    expect(await r.exited).toBe(0);
  }, 60_000);

  it('an admin port in use: exit 1 with its line, and no listener logged as listening', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    held.push(busy);
    const port = (busy.address() as { port: number }).port;
    const { file } = await configFile(`admin: { address: 127.0.0.1:${port} }`);
    const r = await runCli(['start', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.messages).toEqual([`admin.address: 127.0.0.1:${port} is in use (EADDRINUSE)`]);
    expect(r.stderr).not.toContain('"msg":"listening"');
    expect(r.stderr).not.toMatch(STACK);
  }, 30_000);

  it('an admin address not of this machine (port 0): exit 1 with its line, and no listener logged as listening', async () => {
    const { file } = await configFile('admin: { address: 192.0.2.1:0 }');
    const r = await runCli(['start', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]).toMatch(/^admin\.address: 192\.0\.2\.1:0 /);
    expect(r.stderr).not.toContain('"msg":"listening"');
    expect(r.stderr).not.toMatch(STACK);
  }, 30_000);

  it.each([
    [['start', '--panel', 'htpp2'], `'--panel <name>' argument 'htpp2' is invalid. unknown panel "htpp2" (did you`],
    [['start', '--listen', 'localhost'], `'--listen <addr>' argument 'localhost' is invalid. expected host:port`],
    [['etcd', 'import', '--endpoints', 'http://127.0.0.1:9', '--format', 'xml', 'x.yaml'], `'--format <format>'`],
  ])(
    'a bad option value is a usage error, exit 2: %j',
    async (args, message) => {
      const r = await runCli(args);
      expect(r.code).toBe(2);
      expect(r.messages).toHaveLength(1);
      expect(r.messages[0]).toContain(message);
    },
    30_000,
  );
});
