/**
 * The load and the bounds the young-generation tests share (src/process/young-generation.ts): the unit
 * test (in-process and worker thread) and the `switchboard start` test.
 *
 * What they read is the capacity of one semi-space (`space_used_size + space_available_size` of
 * V8's `new_space`), not the new space's committed size (`space_size`, what the cap itself
 * reads). The committed size can run ahead of the capacity: a capped `switchboard start` read
 * 30.5 MiB of it once in CI (2026-12-04; 16 MiB is the cap, and 30.5 is no doubling of it), and
 * a 1.5x bound on it failed there. Pages committed beside the semi-spaces around a scavenge are
 * the likely cause; it did not happen again here in about 20 capped runs, quiet or beside four
 * CPU burners. On the main thread the capacity moves only when V8 grows or shrinks the space,
 * in doublings: 7.9995 MiB capped, and 16 or 32 MiB uncapped in the same runs (a worker's,
 * sized from its resource limits, need not: WORKER_COMMITTED_MAX).
 *
 * The load reads the capacity outside incremental marking only (from a `gc` entry of kind
 * incremental to the next major one). While V8 marks, it does not scavenge: it adds pages to the
 * new space past its capacity instead, whatever the growth factor, and the mark-compact that ends
 * the marking gives them back. A capped `switchboard start` read 8.5 to 14.25 MiB that way in
 * one run in three (2026-12-05: the capacity rose by one turn's allocation each turn from an
 * incremental entry to the next major one, then was 8 MiB again). That is not the growth the cap
 * controls, which is what these bounds are for.
 */
import { YOUNG_SEMI_SPACE_MIB } from '../../src/process/young-generation.ts';

const MIB = 1024 * 1024;

/** The cap, per semi-space: a capped load's largest capacity is at most this. */
export const SEMI_SPACE_CAP = YOUNG_SEMI_SPACE_MIB * MIB;

/**
 * The bound on a worker thread's committed new space (its cap is its resource limits, not the
 * growth factor): 1.5 × the two semi-spaces. V8 turns the worker's young-generation limit (3 ×
 * 8 MiB) into semi-spaces of 8 to 11.5 MiB, not the 8 MiB the main thread is held to (measured
 * 2026-12-04 under this load: largest capacities of 7.9995, 9.9998 and 11.4993 MiB in different
 * runs), so its capacity is not bounded by SEMI_SPACE_CAP; this is the bound the test held
 * before.
 */
export const WORKER_COMMITTED_MAX = 2 * SEMI_SPACE_CAP * 1.5;

/**
 * The tests' load, as source for a child process or a worker (an async context): 1,200
 * event-loop turns, each allocating 5,000 small objects and keeping up to 30,000 alive; leaves
 * the largest semi-space capacity seen outside incremental marking in `max` and the largest committed size in
 * `maxCommitted`. The cap's `gc` observer runs one turn after a collection
 * (src/process/young-generation.ts), so turns that allocate what a semi-space has left beside its
 * survivors can let a second scavenge grow the space past the cap before it runs (a CI run of
 * 2026-12-03: 20,000 objects a turn, 2.7 MiB). A router's turns allocate far less; so does
 * this load, 0.7 MiB a turn. Uncapped, the same load grows the semi-space to 32 MiB on a quiet
 * machine and to 16 MiB at least under CPU contention (V8 shrinks it when allocation is slow).
 */
export const LOAD = `
const { getHeapSpaceStatistics } = await import('node:v8');
const { PerformanceObserver, constants } = await import('node:perf_hooks');
let marking = false;
const marks = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail.kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) marking = true;
    else if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) marking = false;
  }
});
marks.observe({ entryTypes: ['gc'] });
const semiSpace = () => {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
  return s.space_used_size + s.space_available_size;
};
const committed = () => getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size;
let keep = [];
let max = 0;
let maxCommitted = 0;
for (let round = 0; round < 1200; round++) {
  for (let i = 0; i < 5000; i++) { keep.push({ a: i, b: [i] }); if (keep.length > 30000) keep = []; }
  if (!marking) max = Math.max(max, semiSpace());
  maxCommitted = Math.max(maxCommitted, committed());
  await new Promise((r) => setImmediate(r));
}
marks.disconnect();
`;
