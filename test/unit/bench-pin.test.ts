/** CPU placement and speed for the bench (bench/lib/pin.ts, bench/lib/cpu-speed.ts), on this host's real CPUs. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cpuSpeeds, spread } from '../../bench/lib/cpu-speed.ts';
import { allowedCpus, canPin, cpuNumbers, otherCpus, pinnedCommand, pinProcess } from '../../bench/lib/pin.ts';

describe('otherCpus and spread', () => {
  it('lists every CPU but one, and compares the slowest with the fastest', () => {
    expect(cpuNumbers('0-1')).toEqual([0, 1]);
    expect(cpuNumbers('0-2,5,7-8')).toEqual([0, 1, 2, 5, 7, 8]);
    expect(() => cpuNumbers('a-b')).toThrow(/not a CPU list/);
    expect(otherCpus(1, [0, 1])).toBe('0');
    expect(otherCpus(0, [0, 1, 2, 3])).toBe('1,2,3');
    expect(otherCpus(2, [0, 1, 2, 3])).toBe('0,1,3');
    expect(spread([10, 20])).toBe(2);
    expect(spread([9.6, 9.6])).toBe(1);
    expect(spread([8, 12, 10])).toBe(1.5);
  });
});

describe.runIf(canPin())('on this host', () => {
  it('pins a running process and every thread it has, and starts a command pinned', async () => {
    // The first two CPUs this process may use (not necessarily 0 and 1 in a container).
    const [first, second] = cpuNumbers(allowedCpus()!).map(String);
    const child = spawn('sleep', ['10'], { stdio: 'ignore' });
    try {
      pinProcess(child.pid!, first!);
      expect(allowedCpus(child.pid!)).toBe(first);
      const [cmd, args] = pinnedCommand(second!, 'sh', ['-c', 'grep Cpus_allowed_list /proc/self/status']);
      const out = spawn(cmd, args);
      let text = '';
      out.stdout.on('data', (c: Buffer) => {
        text += c.toString();
      });
      await once(out, 'close');
      expect(text).toMatch(new RegExp(`Cpus_allowed_list:\\s*${second}\n`));
    } finally {
      child.kill();
    }
  });

  it('times the same loop on each CPU and puts the calling thread back where it was', () => {
    const self = `self/task/${readlinkSync('/proc/thread-self').split('/').pop()}`;
    const before = allowedCpus(self);
    const ms = cpuSpeeds();
    expect(ms).toBeDefined();
    expect(ms!.length).toBeGreaterThan(1);
    for (const m of ms!) expect(m).toBeGreaterThan(0);
    expect(allowedCpus(self)).toBe(before);
  });
});
