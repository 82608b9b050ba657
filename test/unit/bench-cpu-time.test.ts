/**
 * The bench's CPU-time reader (bench/lib/cpu-time.ts), on real processes: a worker process's
 * CPU counts toward its parent's tree (nginx and HAProxy measure through their workers), a
 * process that is gone counts 0, and a window over a busy process reads its cores.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cpuWindow, treeCpuNs } from '../../bench/lib/cpu-time.ts';

/** Burns `ms` of its own CPU time, says so, then waits to be killed. */
const BURN = (ms: number) =>
  `const s = process.cpuUsage(); while ((process.cpuUsage(s).user + process.cpuUsage(s).system) / 1000 < ${ms}); ` +
  `console.log('burnt'); setInterval(() => {}, 1000);`;

/** A parent that idles, with one child that burns 300 ms; `burnt` resolves once it has. */
function parentWithBusyChild(): { readonly parent: ChildProcess; readonly burnt: Promise<void> } {
  const code = `const c = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(BURN(300))}], { stdio: ['ignore', 'pipe', 'inherit'] });
c.stdout.on('data', (d) => process.stdout.write(d)); setInterval(() => {}, 1000);`;
  // Its own process group: the test kills parent and child together.
  const parent = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  const burnt = new Promise<void>((ok, fail) => {
    parent.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('burnt')) ok();
    });
    parent.once('error', fail);
  });
  return { parent, burnt };
}

describe.runIf(process.platform === 'linux')('bench CPU time', () => {
  it("counts a worker process's CPU in its parent's tree; a gone process counts 0", async () => {
    const { parent, burnt } = parentWithBusyChild();
    try {
      await burnt;
      expect(treeCpuNs([parent.pid!])).toBeGreaterThanOrEqual(300e6); // the child's 300 ms, and start-ups
    } finally {
      const exited = new Promise((r) => parent.once('exit', r));
      process.kill(-parent.pid!, 'SIGKILL');
      await exited;
    }
    expect(treeCpuNs([parent.pid!])).toBe(0);
  }, 20_000);

  it("a window over a busy process reads the cores it kept busy, and the machine's", async () => {
    const child = spawn(process.execPath, ['-e', BURN(200)], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const window = cpuWindow([child.pid!]);
      await new Promise<void>((ok) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('burnt') && ok()));
      const use = window();
      expect(use).toBeDefined();
      expect(use!.targetCores).toBeGreaterThan(0);
      expect(use!.machineCores).toBeGreaterThan(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
