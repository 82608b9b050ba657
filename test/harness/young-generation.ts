/**
 * The bounds the young-generation tests hold a new space to (src/young-generation.ts), shared by
 * the unit test (in-process and worker thread) and the `switchboard start` test.
 */
import { YOUNG_SEMI_SPACE_MIB } from '../../src/young-generation.ts';

const MIB = 1024 * 1024;

/** The cap: two semi-spaces. */
export const CAP = 2 * YOUNG_SEMI_SPACE_MIB * MIB;

/**
 * The most a capped new space may report. V8 counts pages beyond the two semi-spaces for a
 * while after a scavenge: under a load of 20,000 objects a turn capped runs read up to 19.5 MiB
 * on the main thread and 21.25 MiB in a worker (1.33x the cap; a CI run of 2026-12-03 failed on
 * a 1.25x bound), and under this file's lighter load one main-thread run in 15 read 21 MiB
 * (the others 16–17.25). 1.5x stays far below what the load reaches uncapped.
 */
export const CAPPED_MAX = CAP * 1.5;

/** The least an uncapped new space reaches under the same load (64 MiB or more, measured). */
export const FREE_MIN = CAP * 2;

/**
 * The tests' load: ROUNDS event-loop turns, each allocating OBJECTS small objects and keeping up
 * to 30,000 alive. The cap's `gc` observer runs one turn after a collection
 * (src/young-generation.ts), so turns that allocate what a semi-space has left beside its
 * survivors can let a second scavenge grow the space past the cap before it runs (a CI run of
 * 2026-12-03: 41.5 MiB with 20,000 objects a turn, 2.7 MiB). A router's turns allocate far
 * less; so does this load, 0.7 MiB a turn (measured: capped 16–21 MiB, never a doubling, and
 * uncapped 64 MiB in every run, on the main thread and in a worker).
 */
export const ROUNDS = 1200;
export const OBJECTS = 5000;
