/**
 * The young-generation cap (src/young-generation.ts), in real Node processes and a real worker
 * thread: garbage with some survivors is allocated across event-loop turns (the `gc` observer
 * runs between them, as it does in the router) and the largest new space seen is reported.
 * Without the cap the same load grows it to 64 MiB or more, so each bound below can fail.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasOwnSemiSpaceFlags } from '../../src/young-generation.ts';
import { CAP, CAPPED_MAX, FREE_MIN, OBJECTS, ROUNDS } from '../harness/young-generation.ts';

const MODULE = join(import.meta.dirname, '..', '..', 'src', 'young-generation.ts');

/** Allocates for a while, in turns, and prints the largest new space in bytes. */
const LOAD = `
let keep = [];
let max = 0;
for (let round = 0; round < ${ROUNDS}; round++) {
  for (let i = 0; i < ${OBJECTS}; i++) { keep.push({ a: i, b: [i] }); if (keep.length > 30000) keep = []; }
  max = Math.max(max, m.newSpaceBytes());
  await new Promise((r) => setImmediate(r));
}
`;

function largestNewSpace(setup: string, env: Record<string, string> = {}): number {
  const script = `const m = await import(${JSON.stringify(MODULE)});\n${setup}\n${LOAD}\nconsole.log(max);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    encoding: 'utf8',
  });
  return Number(out.trim());
}

describe('young generation cap', () => {
  it('keeps the main thread new space at the cap; without it the same load grows past it', () => {
    const capped = largestNewSpace('m.capYoungGeneration();');
    const free = largestNewSpace('');
    expect(capped).toBeGreaterThan(CAP / 4); // it did grow, up to the cap
    expect(capped).toBeLessThanOrEqual(CAPPED_MAX);
    expect(free).toBeGreaterThan(FREE_MIN);
  }, 60_000);

  it('leaves a process with its own semi-space flags to them', () => {
    const own = largestNewSpace('m.capYoungGeneration();', { NODE_OPTIONS: '--max-semi-space-size=32' });
    expect(own).toBeGreaterThan(FREE_MIN);
  }, 60_000);

  it('stops: V8 grows the new space again after the stop', () => {
    const stopped = largestNewSpace('const stop = m.capYoungGeneration(); stop();');
    expect(stopped).toBeGreaterThan(FREE_MIN);
  }, 60_000);

  it('gives a worker thread the same cap through its resource limits', () => {
    const script = `
const m = await import(${JSON.stringify(MODULE)});
const { Worker } = await import('node:worker_threads');
const body = ${JSON.stringify(`const m = await import(${JSON.stringify(MODULE)});\n${LOAD}\n(await import('node:worker_threads')).parentPort.postMessage(max);`)};
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
    const [limited, free] = JSON.parse(out) as [number, number];
    expect(limited).toBeLessThanOrEqual(CAPPED_MAX);
    expect(free).toBeGreaterThan(FREE_MIN);
  }, 60_000);

  it('recognises semi-space flags on the command line and in NODE_OPTIONS', () => {
    expect(hasOwnSemiSpaceFlags(['--max-semi-space-size=16'], undefined)).toBe(true);
    expect(hasOwnSemiSpaceFlags([], '--inspect --min-semi-space-size=4')).toBe(true);
    expect(hasOwnSemiSpaceFlags([], '--semi-space-growth-factor=1')).toBe(true);
    expect(hasOwnSemiSpaceFlags(['--max-old-space-size=4096'], '--enable-source-maps')).toBe(false);
    expect(hasOwnSemiSpaceFlags([], undefined)).toBe(false);
  });
});
