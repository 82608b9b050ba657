/**
 * bench/h2-cost.ts's floor experiment (issue 18): `--tunings` adds tuned `node-h2-proxy+NAME`
 * rows next to the untuned floor, and several SWB_BENCH_BASELINE checkouts each get a row. A
 * short run; asserts on the rows printed, never on speed (STYLE §20).
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { which } from '../../bench/lib/proc.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

describe('bench/h2-cost.ts', () => {
  it.skipIf(which('h2load') === undefined)(
    'prints a row per tuned floor and per baseline checkout',
    async () => {
      const { stdout } = await run(
        process.execPath,
        [
          join(root, 'bench', 'h2-cost.ts'),
          '--requests',
          '200',
          '--rounds',
          '1',
          '--targets',
          'node-h2-proxy',
          '--tunings',
          'none,win',
        ],
        { env: { ...process.env, SWB_BENCH_BASELINE: `${root},${root}` }, timeout: 120_000 },
      );
      const rows = new Map(
        stdout
          .split('\n')
          .map((l) => l.split('\t'))
          .filter((f) => f.length === 6 && f[0] !== 'target')
          .map((f) => [f[0], Number(f[1])]),
      );
      expect([...rows.keys()]).toEqual([
        'node-h2-proxy',
        'switchboard-http2@baseline',
        'switchboard-http2@baseline2',
        'node-h2-proxy+none',
        'node-h2-proxy+win',
      ]);
      for (const [name, cpu] of rows) expect(cpu, name).toBeGreaterThan(0);
    },
    150_000,
  );
});
