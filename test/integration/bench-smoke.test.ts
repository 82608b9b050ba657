/**
 * The bench harness starts and tears down: a 2-second run with one scenario and two targets
 * (direct and the bare Node pipe). Asserts on processes and on the shape of the result, never
 * on speed (STYLE §20).
 */
import { describe, expect, it } from 'vitest';
import { canPin } from '../../bench/lib/pin.ts';
import { isRunning, which } from '../../bench/lib/proc.ts';
import { runBench } from '../../bench/run.ts';

describe('bench harness smoke', () => {
  it('runs one scenario on two targets and leaves no child process behind', async () => {
    const lines: string[] = [];
    const result = await runBench({
      durationSec: 2,
      rounds: 1,
      warmupSec: 1,
      idleConnections: 10,
      scenarios: ['keepalive'],
      targets: ['direct', 'node-pipe'],
      log: (l) => lines.push(l),
    });
    // backend + node-pipe + at least one load-generator run each
    expect(result.spawned.length).toBeGreaterThanOrEqual(3);
    for (const pid of result.spawned) expect(isRunning(pid), `pid ${pid} still running`).toBe(false);
    expect(result.rows.map((r) => r.target)).toEqual(['direct', 'node-pipe']);
    for (const row of result.rows) {
      expect(row.scenario).toBe('keepalive');
      expect(row.samples).toHaveLength(1);
      expect(row.median).toBeGreaterThan(0);
      expect(row.ratios.direct).toBeDefined();
      // the host's TIME_WAIT count when the measurement started (/proc/net/sockstat, Linux)
      if (process.platform === 'linux') expect(row.extra.timeWait).toBeGreaterThanOrEqual(0);
      // how far apart the CPUs ran when it started (bench/lib/cpu-speed.ts), where taskset can tell
      if (canPin()) expect(row.extra.cpuSpread).toBeGreaterThanOrEqual(1);
      // the cores the target (the backend for `direct`) and the machine kept busy while it was
      // measured, and the target's CPU per request (bench/lib/cpu-time.ts)
      if (process.platform === 'linux') {
        expect(row.extra.targetCores).toBeGreaterThan(0);
        expect(row.extra.machineCores).toBeGreaterThan(0);
        expect(row.extra.cpuUs).toBeCloseTo(((row.extra.targetCores as number) * 1e6) / row.median, -1);
      }
    }
    expect(lines.some((l) => l.startsWith('backend: '))).toBe(true);
  }, 60_000);

  it('--paired measures the pivot right before every other row and keeps the ratio of every round', async () => {
    const lines: string[] = [];
    const result = await runBench({
      durationSec: 1,
      rounds: 2,
      warmupSec: 1,
      idleConnections: 10,
      scenarios: ['keepalive'],
      targets: ['direct', 'node-pipe'],
      paired: true,
      log: (l) => lines.push(l),
    });
    for (const pid of result.spawned) expect(isRunning(pid), `pid ${pid} still running`).toBe(false);
    const measured = lines.filter((l) => l.startsWith('round ')).map((l) => l.split(':')[0]);
    expect(measured).toEqual([
      'round 1/2 keepalive node-pipe',
      'round 1/2 keepalive direct',
      'round 2/2 keepalive node-pipe',
      'round 2/2 keepalive direct',
    ]);
    const direct = result.rows.find((r) => r.target === 'direct');
    const pipe = result.rows.find((r) => r.target === 'node-pipe');
    expect(direct?.paired?.vs).toBe('node-pipe');
    expect(direct?.paired?.ratios).toHaveLength(2);
    expect(direct?.ratios['node-pipe']).toBe(direct?.paired?.ratio);
    expect(pipe?.samples).toHaveLength(2);
    expect(pipe?.paired).toBeUndefined();
  }, 60_000);

  it('--preroll loads the target once more, unmeasured, right before every measurement', async () => {
    const run = (prerollSec: number) =>
      runBench({
        durationSec: 1,
        rounds: 1,
        warmupSec: 1,
        prerollSec,
        idleConnections: 10,
        scenarios: ['keepalive'],
        targets: ['direct', 'node-pipe'],
        log: () => {},
      });
    const without = await run(0);
    const withPreroll = await run(1);
    for (const pid of withPreroll.spawned) expect(isRunning(pid), `pid ${pid} still running`).toBe(false);
    // Two measurements (one round of two rows): one more load-generator run before each.
    expect(withPreroll.spawned.length - without.spawned.length).toBe(2);
    // The preroll is not a sample: one per row and round either way.
    for (const row of withPreroll.rows) expect(row.samples).toHaveLength(1);
    expect(withPreroll.rows.map((r) => r.target)).toEqual(['direct', 'node-pipe']);
  }, 60_000);

  const tools = ['wrk', 'h2load', 'openssl'].every((t) => which(t) !== undefined);
  it.skipIf(!tools)(
    'runs the TLS passthrough and HTTP/2 groups through Switchboard without errors',
    async () => {
      const result = await runBench({
        durationSec: 1,
        rounds: 1,
        warmupSec: 1,
        idleConnections: 10,
        scenarios: ['tlsconn', 'h2'],
        targets: ['direct', 'node-h2-proxy', 'switchboard-net', 'switchboard-http2'],
        log: () => {},
      });
      for (const pid of result.spawned) expect(isRunning(pid), `pid ${pid} still running`).toBe(false);
      expect(result.rows.map((r) => `${r.scenario} ${r.target}`)).toEqual([
        'tlsconn direct',
        'tlsconn switchboard-net',
        'h2 direct',
        'h2 node-h2-proxy',
        'h2 switchboard-http2',
      ]);
      // The HTTP/2 rows carry their ratio to the Node floor of the same run.
      const h2 = result.rows.find((r) => r.scenario === 'h2' && r.target === 'switchboard-http2');
      expect(h2?.ratios['node-h2-proxy']).toBeGreaterThan(0);
      for (const row of result.rows) {
        expect(row.median, `${row.scenario} ${row.target}`).toBeGreaterThan(0);
        expect(row.extra.errors, `${row.scenario} ${row.target} errors`).toBe(0);
      }
    },
    90_000,
  );
});
