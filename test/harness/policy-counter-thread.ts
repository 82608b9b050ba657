/**
 * The thread side of `policy-counter-threads.ts`: attaches to the shared counter store (or makes
 * its own local one), waits at the gate with the other threads, then takes from one key in a
 * tight loop and posts how many passed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type CounterStore, LocalCounters } from '../../src/policy/counters.ts';
import { SharedCounters } from '../../src/policy/shared-counters.ts';
import { processClock } from '../../src/policy/shared-counters-clock.ts';
import { GATE, gateStart, type ThreadTask } from './policy-counter-task.ts';

const task = workerData as ThreadTask;
const gate = new Int32Array(task.gate);
const clock = task.now === undefined ? processClock() : () => task.now ?? 0;
const store: CounterStore = task.state === undefined ? new LocalCounters() : SharedCounters.attach(task.state, clock);

/** Raises the gate's highest-seen word to `n` if it is lower. */
function seen(n: number): void {
  for (;;) {
    const high = Atomics.load(gate, GATE.highest);
    if (n <= high || Atomics.compareExchange(gate, GATE.highest, high, n) === high) return;
  }
}

const rate = store.rate('r#1', task.spec);
const slots = store.concurrency('s#1', task.max);
Atomics.add(gate, GATE.ready, 1);
Atomics.notify(gate, GATE.ready);
Atomics.wait(gate, GATE.go, 0);

let passed = 0;
let first = Number.NaN;
let last = Number.NaN;
if (task.mode === 'burst') {
  for (let i = 0; i < task.loops; i++) if (rate.take('k', clock()) === 0) passed++;
} else if (task.mode === 'window') {
  const start = gateStart(task.gate)[0] ?? 0;
  let t = clock();
  while (t < start) t = clock();
  first = t;
  for (; t < start + task.window; t = clock()) {
    if (rate.take('k', t) === 0) passed++;
    last = t;
  }
} else {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < task.loops; i++) {
    const hold = slots.acquire('k');
    if (hold === undefined) {
      Atomics.wait(pause, 0, 0, 0.2);
      continue;
    }
    passed++;
    seen(Atomics.add(gate, GATE.held, 1) + 1);
    Atomics.wait(pause, 0, 0, task.holdMs);
    Atomics.sub(gate, GATE.held, 1);
    hold.release();
    hold.release();
  }
}
parentPort?.postMessage({ passed, first, last, clock: processClock()() });
