/**
 * examples/deploy/ (issue 19): the sample production config passes `switchboard check`; the
 * Dockerfile is linted (no container engine runs here): non-root USER, exec-form CMD running
 * `node bin/switchboard.js start` as PID 1 (no npm or shell wrapper), every COPY source exists,
 * exec-form HEALTHCHECK; the systemd unit passes `systemd-analyze verify` and has ExecReload
 * sending HUP and LimitNOFILE; and the router as PID 1 of its own PID namespace (as in a
 * container) reloads on HUP and drains and exits 0 on TERM — a PID 1 gets only the signals it
 * has handlers for. Issue 39 item 10: `systemd-analyze security --offline=yes` rates the unit at
 * most 2.0 and each directive it listed as missing is there; /var/lib/switchboard is writable
 * (ACME storage, last-known-good caches); the unit's own ExecStartPre line, run with only the
 * system's directories on PATH (where /usr/bin/node may be older than 22.18), checks the sample
 * config; the Docker example publishes admin on loopback only; an access-log file is created
 * 0640 (under umask 022), also after a reopen.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend } from '../harness/backend.ts';
import { hasStack, runCli } from '../harness/cli-run.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, tempDir } from '../harness/router.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = join(ROOT, 'examples/deploy');

/** Dockerfile instructions: continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\S+)\s*(.*)$/.exec(l)!;
      return { op: m[1]!.toUpperCase(), args: m[2]!.trim() };
    });
}

describe('examples/deploy', () => {
  it('the sample production config passes switchboard check', async () => {
    const r = await runCli(['check', '--config', join(DEPLOY, 'switchboard.yaml')]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain(': ok');
    expect(hasStack(r.stderr)).toBe(false);
    const text = await readFile(join(DEPLOY, 'switchboard.yaml'), 'utf8');
    expect(text).toMatch(/proxyProtocol: v2/);
    expect(text).toMatch(/^admin:\n {2}address: .*\n {2}token:/m);
  });

  it('Dockerfile: non-root, node as PID 1 in exec form, sources that exist', async () => {
    const ins = instructions(await readFile(join(DEPLOY, 'Dockerfile'), 'utf8'));
    expect(ins[0]?.op).toBe('FROM');
    expect(ins[0]?.args).toMatch(/^node:2[4-9]/);
    const last = (op: string) => ins.filter((i) => i.op === op).at(-1);
    const user = last('USER');
    expect(user, 'a USER instruction').toBeDefined();
    expect(user!.args).not.toMatch(/^(root|0)(:|$)/);
    // USER comes after the last RUN, so nothing at run time is root.
    expect(ins.indexOf(user!)).toBeGreaterThan(ins.indexOf(last('RUN')!));
    expect(ins.some((i) => i.op === 'ENTRYPOINT')).toBe(false);
    const cmd = JSON.parse(last('CMD')!.args) as string[];
    expect(cmd.slice(0, 3)).toEqual(['node', 'bin/switchboard.js', 'start']);
    expect(cmd.join(' ')).not.toMatch(/\bnpm\b|\bsh\b|\bbash\b/);
    expect(last('STOPSIGNAL')?.args ?? 'SIGTERM').toBe('SIGTERM');
    const health = last('HEALTHCHECK');
    if (health !== undefined) expect(health.args).toMatch(/CMD \[/);
    for (const copy of ins.filter((i) => i.op === 'COPY')) {
      const parts = copy.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      for (const source of parts.slice(0, -1)) expect(existsSync(join(ROOT, source)), `COPY ${source}`).toBe(true);
    }
    // The production image needs no dev dependency: nothing it copies imports one.
    expect(ins.some((i) => i.op === 'RUN' && /npm ci --omit=dev/.test(i.args))).toBe(true);
  });

  const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
  it.skipIf(!hasAnalyze)('systemd unit: systemd-analyze verify, ExecReload HUP, LimitNOFILE', async () => {
    const unit = await readFile(join(DEPLOY, 'switchboard.service'), 'utf8');
    expect(unit).toMatch(/^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
    expect(unit).toMatch(/^LimitNOFILE=\d+$/m);
    expect(unit).toMatch(/^User=(?!root)\w+/m);
    // verify checks that ExecStart's binary exists: point it at this Node when /usr/bin/node is absent.
    const dir = await tempDir();
    try {
      const text = existsSync('/usr/bin/node') ? unit : unit.replaceAll('/usr/bin/node', process.execPath);
      const file = join(dir, 'switchboard.service');
      await writeFile(file, text);
      const r = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile('systemd-analyze', ['verify', file], (e, stdout, stderr) =>
          resolve({ code: e === null ? 0 : Number(e.code ?? 1), out: stdout + stderr }),
        );
      });
      expect(r.code, r.out).toBe(0);
      expect(r.out).not.toMatch(/switchboard\.service:\d+: /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  const hasUnshare = spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;
  it.skipIf(!hasUnshare)(
    'as PID 1 of its own PID namespace: HUP reloads, TERM drains and exits 0',
    async () => {
      const backend = await startHttpBackend('b1');
      const dir = await tempDir();
      const config = join(dir, 'switchboard.yaml');
      const write = (cluster: string) =>
        writeFile(
          config,
          stringify({
            listeners: [{ name: 'web', address: '127.0.0.1:0' }],
            log: { access: 'off' },
            limits: { drainTimeout: '2s' },
            addressBook: {
              name: 'bfe',
              products: { p: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster }] } },
              clusters: { [cluster]: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
            },
          }),
        );
      await write('first');
      let child: ChildProcess | undefined;
      try {
        child = spawn(
          'unshare',
          ['--pid', '--fork', '--kill-child', process.execPath, 'bin/switchboard.js', 'start', '--config', config],
          { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let logs = '';
        child.stderr?.on('data', (c) => (logs += c));
        const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
        await eventually(() => logs.includes('"listening"'), 15_000, 'listening');
        const port = Number(/"address":"127\.0\.0\.1:(\d+)"/.exec(logs)![1]);
        expect((await httpGet(port, '/')).status).toBe(200);
        // The router is the unshare child: PID 1 inside its namespace.
        const node = Number(
          (await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')).trim().split(' ')[0],
        );
        const nspid = (await readFile(`/proc/${node}/status`, 'utf8'))
          .match(/^NSpid:\s+(.*)$/m)![1]!
          .trim()
          .split(/\s+/);
        expect(nspid.at(-1)).toBe('1');
        // HUP reloads (the file is unchanged, so the reload says so).
        process.kill(node, 'SIGHUP');
        const hup = (l: string) => l.includes('"trigger":"SIGHUP"') && l.includes('reload: config unchanged');
        await eventually(() => logs.split('\n').some(hup), 10_000, 'reload on HUP');
        process.kill(node, 'SIGTERM');
        expect(await exited).toBe(0);
        expect(logs).toContain('draining, then shutting down');
        expect(logs).toContain('"shut down"');
      } finally {
        if (child?.exitCode === null) child.kill('SIGKILL');
        await backend.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
    40_000,
  );

  it.skipIf(!hasAnalyze)(
    'systemd unit: systemd-analyze security exposure at most 2.0, the directives it wanted',
    async () => {
      const unit = await readFile(join(DEPLOY, 'switchboard.service'), 'utf8');
      for (const directive of [
        'SystemCallFilter=@system-service',
        'SystemCallArchitectures=native',
        'RestrictNamespaces=yes',
        'LockPersonality=yes',
        'RestrictSUIDSGID=yes',
        'RestrictRealtime=yes',
        'ProtectClock=yes',
        'ProtectHostname=yes',
        'ProtectKernelLogs=yes',
        'ProtectProc=invisible',
        'UMask=0077',
        'ProtectSystem=strict',
        'StateDirectory=switchboard',
        'LogsDirectory=switchboard',
      ]) {
        expect(unit).toContain(`\n${directive}\n`);
      }
      const dir = await tempDir();
      try {
        const file = join(dir, 'switchboard.service');
        await writeFile(file, unit);
        const r = await new Promise<{ code: number; out: string }>((resolve) => {
          execFile('systemd-analyze', ['security', '--offline=yes', file], (e, stdout, stderr) =>
            resolve({ code: e === null ? 0 : Number(e.code ?? 1), out: stdout + stderr }),
          );
        });
        const level = /Overall exposure level for switchboard\.service: (\d+\.\d+)/.exec(r.out);
        expect(level, r.out).not.toBeNull();
        expect(Number(level![1]), r.out).toBeLessThanOrEqual(2.0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it('systemd unit: Node comes through scripts/use-node.sh, and its ExecStartPre runs on this machine', async () => {
    const unit = await readFile(join(DEPLOY, 'switchboard.service'), 'utf8');
    const exec = (key: string) => new RegExp(`^${key}=/bin/sh -c '(.*)'$`, 'm').exec(unit)?.[1];
    const pre = exec('ExecStartPre');
    const start = exec('ExecStart');
    expect(pre).toMatch(/^\. scripts\/use-node\.sh && exec node bin\/switchboard\.js check --config \S+$/);
    expect(start).toMatch(/^\. scripts\/use-node\.sh && exec node bin\/switchboard\.js start --config \S+$/);
    expect(unit).not.toMatch(/^Exec\w*=\/usr\/bin\/node/m);
    // The line as systemd runs it (sh, the working directory, a PATH of the system's directories),
    // on the sample config: whatever /usr/bin/node is, the check runs on Node >= 22.18.
    const line = pre!.replace(/--config \S+$/, `--config ${join(DEPLOY, 'switchboard.yaml')}`);
    const r = spawnSync('/bin/sh', ['-c', line], {
      cwd: ROOT,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: ROOT },
      encoding: 'utf8',
      timeout: 180_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(': ok');
  }, 200_000);

  it('Dockerfile: the admin port is published on loopback only, and not EXPOSEd', async () => {
    const text = await readFile(join(DEPLOY, 'Dockerfile'), 'utf8');
    const ins = instructions(text);
    const exposed = ins.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
    expect(exposed).toContain('8080');
    expect(exposed).not.toContain('9901');
    // Every `-p` naming the admin port, in the Dockerfile's and the README's run lines.
    const readme = await readFile(join(DEPLOY, 'README.md'), 'utf8');
    const publishes = [...`${text}\n${readme}`.matchAll(/-p (\S+)/g)].map((m) => m[1]!);
    const admin = publishes.filter((p) => p.endsWith(':9901'));
    expect(admin.length).toBeGreaterThanOrEqual(2);
    for (const p of admin) expect(p).toBe('127.0.0.1:9901:9901');
  });

  it('an access-log file is created 0640 (umask 022), and again after a reopen', async () => {
    const backend = await startHttpBackend('b1');
    const dir = await tempDir();
    const log = join(dir, 'logs', 'access.log');
    const config = join(dir, 'switchboard.yaml');
    await writeFile(
      config,
      stringify({
        listeners: [{ name: 'web', address: '127.0.0.1:0' }],
        log: { access: log },
        limits: { drainTimeout: '1s' },
        addressBook: {
          name: 'bfe',
          products: { p: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
          clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
        },
      }),
    );
    const child = spawn(
      '/bin/sh',
      ['-c', 'umask 022; exec "$0" "$@"', process.execPath, 'bin/switchboard.js', 'start', '--config', config],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let logs = '';
    child.stderr?.on('data', (c) => (logs += c));
    try {
      await eventually(() => logs.includes('"listening"'), 15_000, 'listening');
      const port = Number(/"address":"127\.0\.0\.1:(\d+)"/.exec(logs)![1]);
      expect((await httpGet(port, '/')).status).toBe(200);
      await eventually(() => existsSync(log) && statSync(log).size > 0, 10_000, 'an access line');
      expect((statSync(log).mode & 0o777).toString(8)).toBe('640');
      // logrotate moves the file away and sends USR1: the new file is 0640 too.
      await rename(log, `${log}.1`);
      child.kill('SIGUSR1');
      expect((await httpGet(port, '/')).status).toBe(200);
      await eventually(() => existsSync(log) && statSync(log).size > 0, 10_000, 'a reopened file');
      expect((statSync(log).mode & 0o777).toString(8)).toBe('640');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
