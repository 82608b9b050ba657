/**
 * HTTP/2 load with `h2load` (nghttp2): one thread, `connections` connections with `streams`
 * concurrent streams each, for a fixed duration. Requests/s comes from h2load's summary, p50/p99
 * from its per-request log (`--log-file`: start µs, status, duration µs per line).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadResult } from './loadgen.ts';
import { which } from './proc.ts';
import type { Spawner } from './types.ts';

/** What to run. */
export interface H2Spec {
  readonly url: string;
  readonly connections: number;
  readonly streams: number;
  readonly durationSec: number;
  /** Folder for the per-request log. */
  readonly dir: string;
}

let seq = 0;

/** Why h2load cannot run here, or undefined. */
export function h2loadMissing(): string | undefined {
  return which('h2load') === undefined ? 'h2load is not installed (Debian: nghttp2-client)' : undefined;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** Runs h2load once; errors are failed + errored requests plus non-2xx answers. */
export async function runH2load(spec: H2Spec, spawn: Spawner): Promise<LoadResult> {
  const log = join(spec.dir, `h2load-${process.pid}-${seq++}.log`);
  const args = ['-t1', `-c${spec.connections}`, `-m${spec.streams}`, `-D${spec.durationSec}`, `--log-file=${log}`];
  const child = spawn.start(which('h2load') as string, [...args, spec.url]);
  await child.exited;
  const out = child.stdout();
  const rps = Number(/finished in [^,]+, ([\d.]+) req\/s, ([\d.]+)([KMG]?B)\/s/.exec(out)?.[1] ?? Number.NaN);
  const counts = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!Number.isFinite(rps) || counts === null || Number(counts[2]) === 0)
    throw new Error(`bench: h2load failed: ${out.slice(-800)} ${child.stderr().slice(-400)}`);
  const durations = (await readFile(log, 'utf8').catch(() => ''))
    .split('\n')
    .map((l) => Number(l.split('\t')[2]))
    .filter((n) => Number.isFinite(n) && n > 0)
    .sort((a, b) => a - b);
  await rm(log, { force: true });
  const bad = codes === null ? 0 : Number(codes[2]) + Number(codes[3]) + Number(codes[4]);
  return {
    rps,
    bytesPerSec: Number.NaN,
    p50Ms: percentile(durations, 0.5) / 1000,
    p99Ms: percentile(durations, 0.99) / 1000,
    errors: Number(counts[3]) + Number(counts[4]) + bad,
  };
}
