/**
 * The young-generation cap (src/process/young-generation.ts), in real Node processes and a real worker
 * thread: garbage with some survivors is allocated across event-loop turns (the `gc` observer
 * runs between them, as it does in the router) and the largest semi-space capacity seen is
 * reported (test/harness/young-generation.ts). Without the cap the same load grows it to twice
 * the cap or more, so each bound below can fail.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasOwnSemiSpaceFlags } from '../../src/process/young-generation.ts';
import { LOAD, SEMI_SPACE_CAP, WORKER_COMMITTED_MAX } from '../harness/young-generation.ts';

const MODULE = join(import.meta.dirname, '..', '..', 'src', 'process', 'young-generation.ts');

/** Runs `setup` and the load in a fresh Node process; the largest semi-space capacity, bytes. */
function largestSemiSpace(setup: string, env: Record<string, string> = {}): number {
  const script = `const m = await import(${JSON.stringify(MODULE)});\n${setup}\n${LOAD}\nconsole.log(max);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    encoding: 'utf8',
  });
  return Number(out.trim());
}

describe('young generation cap', () => {
  it("keeps the main thread's semi-space at the cap; without it the same load grows past it", () => {
    const capped = largestSemiSpace('m.capYoungGeneration();');
    const free = largestSemiSpace('');
    expect(capped).toBeGreaterThan(SEMI_SPACE_CAP / 2); // it did grow, up to the cap
    expect(capped).toBeLessThanOrEqual(SEMI_SPACE_CAP);
    expect(free).toBeGreaterThan(SEMI_SPACE_CAP);
  }, 60_000);

  it('leaves a process with its own semi-space flags to them', () => {
    const own = largestSemiSpace('m.capYoungGeneration();', { NODE_OPTIONS: '--max-semi-space-size=32' });
    expect(own).toBeGreaterThan(SEMI_SPACE_CAP);
  }, 60_000);

  it('stops: V8 grows the new space again after the stop', () => {
    const stopped = largestSemiSpace('const stop = m.capYoungGeneration(); stop();');
    expect(stopped).toBeGreaterThan(SEMI_SPACE_CAP);
  }, 60_000);

  it('gives a worker thread a cap through its resource limits', () => {
    const script = `
const m = await import(${JSON.stringify(MODULE)});
const { Worker } = await import('node:worker_threads');
const body = ${JSON.stringify(`${LOAD}\n(await import('node:worker_threads')).parentPort.postMessage([max, maxCommitted]);`)};
const run = (limits) => new Promise((ok, fail) => {
  const w = new Worker('(async () => {' + body + '})()', { eval: true, resourceLimits: limits });
  w.once('message', ok);
  w.once('error', fail);
});
console.log(JSON.stringify([await run(m.workerYoungGenerationLimit()), await run({})]));
`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: '' },
      encoding: 'utf8',
    });
    const [[, limited], [free]] = JSON.parse(out) as [[number, number], [number, number]];
    expect(limited).toBeLessThanOrEqual(WORKER_COMMITTED_MAX); // committed bytes (the harness says why)
    expect(free).toBeGreaterThan(SEMI_SPACE_CAP); // a semi-space's capacity
  }, 60_000);

  it('recognises semi-space flags on the command line and in NODE_OPTIONS', () => {
    expect(hasOwnSemiSpaceFlags(['--max-semi-space-size=16'], undefined)).toBe(true);
    expect(hasOwnSemiSpaceFlags([], '--inspect --min-semi-space-size=4')).toBe(true);
    expect(hasOwnSemiSpaceFlags([], '--semi-space-growth-factor=1')).toBe(true);
    expect(hasOwnSemiSpaceFlags(['--max-old-space-size=4096'], '--enable-source-maps')).toBe(false);
    expect(hasOwnSemiSpaceFlags([], undefined)).toBe(false);
  });
});
