/**
 * Policy counters under real worker threads (src/policy/shared-counters.ts): N threads each
 * attached to one shared store — or each with a local store of its own, to show the test can
 * fail — released together through a gate, each taking from the same key; what each passed.
 *
 *   gate: Int32 [ready] threads waiting · [go] 1 = start · [held] slots held now ·
 *               [highest] the most held at once, seen by any thread
 *         Float64 [start] where window mode's takes begin (process clock, START_AFTER_GO after go)
 */
import { Worker } from 'node:worker_threads';
import { processClock } from '../../src/policy/shared-counters-clock.ts';
import { GATE, GATE_BYTES, gateStart, type ThreadTask } from './policy-counter-task.ts';

/**
 * Window mode starts this long after go, so every thread is spinning on the clock by then: a
 * thread woken late on a busy machine would start the window with fewer takes than it allows.
 */
const START_AFTER_GO = 150;

/** What the threads did: passed per thread, the most slots held at once, each thread's clock at its end. */
export interface ThreadsResult {
  readonly passed: readonly number[];
  readonly highest: number;
  readonly clocks: readonly number[];
  /** Window mode: the first and the last instant any thread took at (process clock, ms). */
  readonly first: number;
  readonly last: number;
}

/** Runs `threads` threads on `task` (its gate made here) and waits for all of them. */
export async function runCounterThreads(threads: number, task: Omit<ThreadTask, 'gate'>): Promise<ThreadsResult> {
  const gateBuffer = new SharedArrayBuffer(GATE_BYTES);
  const gate = new Int32Array(gateBuffer);
  const entry = new URL('./policy-counter-thread.ts', import.meta.url);
  const workers = Array.from(
    { length: threads },
    () => new Worker(entry, { workerData: { ...task, gate: gateBuffer } }),
  );
  const results = workers.map(
    (w) =>
      new Promise<{ passed: number; first: number; last: number; clock: number }>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
        w.once('exit', (code) => reject(new Error(`counter thread exited with ${code}`)));
      }),
  );
  try {
    while (Atomics.load(gate, GATE.ready) < threads) await new Promise((r) => setTimeout(r, 5));
    gateStart(gateBuffer)[0] = processClock()() + START_AFTER_GO;
    Atomics.store(gate, GATE.go, 1);
    Atomics.notify(gate, GATE.go);
    const done = await Promise.all(results);
    return {
      passed: done.map((d) => d.passed),
      highest: Atomics.load(gate, GATE.highest),
      clocks: done.map((d) => d.clock),
      first: Math.min(...done.map((d) => d.first)),
      last: Math.max(...done.map((d) => d.last)),
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
