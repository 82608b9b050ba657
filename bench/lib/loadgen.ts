/**
 * Load generators: wrk when installed (one thread, so it leaves the other core to the target),
 * autocannon otherwise. Both run as their own process and report the same `LoadResult`.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { which } from './proc.ts';
import { ROOT } from './targets.ts';
import type { Spawner } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** One load run's outcome. */
export interface LoadResult {
  readonly rps: number;
  readonly bytesPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Socket errors plus non-2xx answers. */
  readonly errors: number;
}

/** What to run. */
export interface LoadSpec {
  readonly url: string;
  readonly connections: number;
  readonly durationSec: number;
  /** Send `Connection: close`: a new connection per request. */
  readonly close: boolean;
}

/** The load generator to use when none is asked for. */
export function defaultLoadgen(): 'wrk' | 'autocannon' {
  return which('wrk') !== undefined ? 'wrk' : 'autocannon';
}

function lastJsonLine(text: string, stderr: string, what: string): Record<string, unknown> {
  const line = text
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (line === undefined)
    throw new Error(`bench: ${what} printed no result: ${text.slice(-500)} ${stderr.slice(-500)}`);
  return JSON.parse(line) as Record<string, unknown>;
}

async function runWrk(spec: LoadSpec, spawn: Spawner): Promise<LoadResult> {
  const args = ['-t1', `-c${spec.connections}`, `-d${spec.durationSec}s`, '-s', join(here, 'wrk-report.lua')];
  if (spec.close) args.push('-H', 'Connection: close');
  const child = spawn.start(which('wrk') as string, [...args, spec.url]);
  await child.exited;
  const r = lastJsonLine(child.stdout(), child.stderr(), 'wrk') as Record<string, number>;
  const seconds = (r.durationUs ?? 1) / 1e6;
  return {
    rps: (r.requests ?? 0) / seconds,
    bytesPerSec: (r.bytes ?? 0) / seconds,
    p50Ms: (r.p50Us ?? 0) / 1000,
    p99Ms: (r.p99Us ?? 0) / 1000,
    errors: (r.errors ?? 0) + (r.status ?? 0),
  };
}

async function runAutocannon(spec: LoadSpec, spawn: Spawner): Promise<LoadResult> {
  const args = ['-c', String(spec.connections), '-d', String(spec.durationSec), '-j'];
  if (spec.close) args.push('-H', 'Connection=close');
  const cli = join(ROOT, 'node_modules', 'autocannon', 'autocannon.js');
  const child = spawn.start(process.execPath, [cli, ...args, spec.url]);
  await child.exited;
  const r = lastJsonLine(child.stdout(), child.stderr(), 'autocannon') as {
    requests: { average: number };
    throughput: { average: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  };
  return {
    rps: r.requests.average,
    bytesPerSec: r.throughput.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors + r.non2xx,
  };
}

/** Runs `spec` with the chosen generator. */
export function runLoad(spec: LoadSpec, loadgen: 'wrk' | 'autocannon', spawn: Spawner): Promise<LoadResult> {
  return loadgen === 'wrk' ? runWrk(spec, spawn) : runAutocannon(spec, spawn);
}
