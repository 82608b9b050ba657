/**
 * What a policy counter thread is told (policy-counter-threads.ts runs it,
 * policy-counter-thread.ts is the thread): its task and the gate's words.
 */
import type { RateSpec } from '../../src/contracts/policy.ts';
import type { SharedCountersState } from '../../src/policy/shared-counters.ts';

/** Int32 word indexes of the gate. */
export const GATE = { ready: 0, go: 1, held: 2, highest: 3 } as const;

/** The byte of the gate's Float64 start (window mode), after the four words. */
export const START_BYTE = 16;

/** Bytes of the gate: four Int32 words, then the Float64 start. */
export const GATE_BYTES = 24;

/** The gate's start word. */
export function gateStart(gate: SharedArrayBuffer): Float64Array {
  return new Float64Array(gate, START_BYTE, 1);
}

/** What one thread does (posted as its workerData). */
export interface ThreadTask {
  /** burst: `loops` takes; window: take from the gate's start for `window` ms; in-flight: `loops` acquire/hold/release. */
  readonly mode: 'burst' | 'window' | 'in-flight';
  /** The shared store's state; undefined = a local store per thread. */
  readonly state: SharedCountersState | undefined;
  readonly gate: SharedArrayBuffer;
  /** A fixed instant for every take (ms); undefined = the process clock. */
  readonly now: number | undefined;
  readonly spec: RateSpec;
  readonly max: number;
  readonly loops: number;
  /** Window mode: the takes run from the gate's start (process clock, ms) for this long. */
  readonly window: number;
  readonly holdMs: number;
}
