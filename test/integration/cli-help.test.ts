/**
 * `--help` worth reading (issue 19): every command's help has examples and exit codes; `start`
 * lists the signals and environment variables; `route` its own exit codes; `npm run bench --
 * --help` lists groups, scenarios, targets, flags and environment. Through the real CLI.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hasStack, runCli } from '../harness/cli-run.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('switchboard --help', () => {
  it('the program lists commands and examples', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Commands:[\s\S]*start[\s\S]*route/);
    expect(r.stdout).toContain('Examples:');
  });

  it('start: examples, signals, exit codes, environment', async () => {
    const r = await runCli(['start', '--help']);
    expect(r.code).toBe(0);
    for (const part of ['Examples:', 'Signals:', 'Exit codes:', 'Environment:']) expect(r.stdout).toContain(part);
    expect(r.stdout).toMatch(/^\s+HUP\s+reload the config/m);
    expect(r.stdout).toMatch(/^\s+TERM, INT\s+graceful stop/m);
    expect(r.stdout).toMatch(/^\s+USR1\s+reopen the access-log file/m);
    expect(r.stdout).toContain('SWITCHBOARD_ADMIN_TOKEN');
    expect(r.stdout).toContain('LimitNOFILE');
  });

  it.each([
    ['check', /3\s+invalid config/],
    ['route', /1\s+no route/],
    ['import-bfe', /Exit codes:/],
    ['db', /Exit codes:/],
    ['etcd', /Exit codes:/],
  ])('%s --help has examples and exit codes', async (command, codes) => {
    const r = await runCli([command, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toMatch(codes);
    expect(hasStack(r.stderr)).toBe(false);
  });
});

describe('npm run bench -- --help', () => {
  it('lists groups, scenarios, targets, suites, flags and environment, and runs nothing', async () => {
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(process.execPath, ['bench/run.ts', '--help'], { cwd: ROOT }, (e, out) =>
        resolve({ code: e === null ? 0 : Number(e.code ?? 1), out }),
      );
    });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: npm run bench -- \[flags\]/);
    expect(r.out).toMatch(/^ {2}http1\n {4}scenarios: keepalive/m);
    expect(r.out).toMatch(/^ {2}h2\n/m);
    expect(r.out).toMatch(/targets: .*switchboard-net/);
    expect(r.out).toMatch(/--suite NAME\s+default \| scaling \| all/);
    expect(r.out).toContain('SWB_BENCH_BASELINE');
    expect(r.out).toMatch(/--preroll S\s+seconds of the same load/);
  });

  it('refuses a --preroll that is not a number of seconds, before it starts anything', async () => {
    for (const bad of ['x', '-1']) {
      const r = await new Promise<{ code: number; err: string }>((resolve) => {
        execFile(process.execPath, ['bench/run.ts', `--preroll=${bad}`], { cwd: ROOT }, (e, _out, err) =>
          resolve({ code: e === null ? 0 : Number(e.code ?? 1), err }),
        );
      });
      expect(r.code, bad).toBe(1);
      expect(r.err.trim()).toBe(`bench: --preroll ${bad}: seconds, 0 or more`);
    }
  });
});
