/**
 * The `CounterStore` of the worker panel: every rule's counters in one SharedArrayBuffer, so a
 * count is process-wide (4 threads with 100/s forward 100/s, in-flight max 2 holds 2).
 *
 * 1. The main thread makes the store (`SharedCounters.create`) and posts its `state` (the
 *    buffer and its sizes: plain data that survives `structuredClone`); each thread attaches to
 *    it (`SharedCounters.attach`). Their views count in the same memory.
 * 2. A counter's region is found by its id (`<kind> <rule identity> <spec>`, as the local
 *    store keys its counters) in the buffer's directory (shared-counters-layout.ts): every
 *    thread that compiles the same rule finds the same region. An unchanged rule keeps its
 *    region across reloads (no fresh burst; a hold taken before the reload releases into the
 *    count it took); a changed rule has another id, so a fresh region.
 * 3. `next()` is the view of the next snapshot on the same buffer, `seal()` forgets the
 *    previous view's counters, `entries()` lists this snapshot's (metrics), as `LocalCounters`.
 * 4. Size: a rate region is 8 + 12 × S bytes (S = the power of two ≥ its `maxKeys`), a
 *    concurrency region 8 + 4 × `concurrencyKeys`. Regions are never freed, so the buffer is
 *    sized by the main thread from the config: `needed` after compiling a snapshot is what it
 *    asked for; twice that (at least 1 MiB) lets every rule change once before a new buffer is
 *    needed. A region that does not fit counts in this thread only (a buffer of its own) and
 *    sets `full`, so the compile goes on and `needed` is complete: the main thread, which
 *    compiles each snapshot before its threads, then makes a new store of 2 × `needed`,
 *    compiles again on it and posts its state with the snapshot. The new buffer starts afresh
 *    (one fresh burst per rule; holds taken before it release into the old one).
 * 5. The clock must be one timeline for all threads: `now` (default `processClock()`,
 *    shared-counters-clock.ts) is what the wiring passes to `compilePolicies({ now })`; tests
 *    inject a fake one.
 * 6. A worker that dies holding slots would leave them counted: the main thread calls
 *    `forgetHolds()`, which clears every concurrency count (caps relaxed for the requests still
 *    in progress, never stuck at the limit), as `SharedAdmission.forgetWorker` does.
 */
import type { ConcurrencyCounter, RateCounter, RateSpec } from '../contracts/policy.ts';
import type { CounterStore } from './counters.ts';
import { processClock } from './shared-counters-clock.ts';
import { concurrencyRegionBytes, SharedConcurrency } from './shared-counters-concurrency.ts';
import { rateRegionBytes, SharedGcra } from './shared-counters-gcra.ts';
import {
  CONCURRENCY,
  claimRegion,
  FULL,
  newCounterBuffer,
  RATE,
  regionsOf,
  regionsStart,
  tableSize,
} from './shared-counters-layout.ts';

/** What a thread needs to attach: plain data, posted to worker threads as is. */
export interface SharedCountersState {
  readonly buffer: SharedArrayBuffer;
  /** Directory entries: the most regions the buffer can hold. */
  readonly regions: number;
  /** Words of each concurrency region (a power of two). */
  readonly concurrencyKeys: number;
}

/** How the main thread sizes a new store. */
export interface SharedCountersOptions {
  /** Bytes of the buffer (default 64 MiB; the OS commits pages only when touched). */
  readonly bytes?: number;
  /** Directory entries (default 1024). */
  readonly regions?: number;
  /** Keys in progress per concurrency rule (default 16,384, rounded up to a power of two). */
  readonly concurrencyKeys?: number;
  readonly now?: () => number;
}

type SharedCounter = SharedGcra | SharedConcurrency;

/** Counters in a SharedArrayBuffer, the same for every thread attached to it. */
export class SharedCounters implements CounterStore {
  readonly state: SharedCountersState;
  /** The counters' clock, one timeline for every thread. */
  readonly now: () => number;
  readonly #words: Int32Array;
  readonly #kept = new Map<string, SharedCounter>();
  #previous: ReadonlyMap<string, SharedCounter> | undefined;
  #needed: number;
  #full = false;

  private constructor(state: SharedCountersState, now: () => number, previous?: ReadonlyMap<string, SharedCounter>) {
    this.state = state;
    this.now = now;
    this.#words = new Int32Array(state.buffer);
    this.#previous = previous;
    this.#needed = regionsStart(state.regions);
  }

  /** The main thread's store: a new buffer. */
  static create(options: SharedCountersOptions = {}): SharedCounters {
    const regions = options.regions ?? 1024;
    const bytes = Math.max(options.bytes ?? 64 * 1024 * 1024, regionsStart(regions));
    const state = {
      buffer: newCounterBuffer(bytes, regions),
      regions,
      concurrencyKeys: tableSize(options.concurrencyKeys ?? 16_384),
    };
    return new SharedCounters(state, options.now ?? processClock());
  }

  /** A thread's view of the main thread's store. */
  static attach(state: SharedCountersState, now: () => number = processClock()): SharedCounters {
    return new SharedCounters(state, now);
  }

  /** Bytes this snapshot's counters take (header and directory included): the sizing input. */
  get needed(): number {
    return this.#needed;
  }

  /** True once a counter of this snapshot did not fit: the buffer must be replaced. */
  get full(): boolean {
    return this.#full;
  }

  rate(key: string, spec: RateSpec): RateCounter {
    const id = `rate ${key} ${spec.rate}/${spec.per} ${spec.burst} ${spec.maxKeys}`;
    const bytes = rateRegionBytes(spec.maxKeys);
    const found = this.#find(id);
    let counter = found instanceof SharedGcra ? found : undefined;
    if (counter === undefined) {
      const { buffer, offset } = this.#region(id, bytes, RATE);
      counter = new SharedGcra(buffer, offset, spec);
    }
    this.#keep(id, counter, bytes);
    return counter;
  }

  concurrency(key: string, max: number): ConcurrencyCounter {
    const id = `concurrency ${key} ${max}`;
    const words = this.state.concurrencyKeys;
    const bytes = concurrencyRegionBytes(words);
    const found = this.#find(id);
    let counter = found instanceof SharedConcurrency ? found : undefined;
    if (counter === undefined) {
      const { buffer, offset } = this.#region(id, bytes, CONCURRENCY);
      counter = new SharedConcurrency(buffer, offset, words, max);
    }
    this.#keep(id, counter, bytes);
    return counter;
  }

  next(): SharedCounters {
    return new SharedCounters(this.state, this.now, this.#kept);
  }

  seal(): void {
    this.#previous = undefined;
  }

  entries(): Iterable<readonly [string, RateCounter | ConcurrencyCounter]> {
    return this.#kept.entries();
  }

  /** Main thread, after a worker died: clears every in-flight count (step 6). */
  forgetHolds(): void {
    const words = this.state.concurrencyKeys;
    for (const { offset } of regionsOf(this.#words, this.state.regions, CONCURRENCY)) {
      new SharedConcurrency(this.state.buffer, offset, words, 1).forget();
    }
  }

  #find(id: string): SharedCounter | undefined {
    return this.#kept.get(id) ?? this.#previous?.get(id);
  }

  #keep(id: string, counter: SharedCounter, bytes: number): void {
    if (!this.#kept.has(id)) this.#needed += (bytes + 7) & ~7;
    this.#kept.set(id, counter);
  }

  /** The region's buffer and offset; a region that does not fit gets a buffer of this thread's (step 4). */
  #region(id: string, bytes: number, kind: number): { buffer: SharedArrayBuffer; offset: number } {
    const offset = claimRegion(this.#words, this.state.regions, id, bytes, kind);
    if (offset !== FULL) return { buffer: this.state.buffer, offset };
    this.#full = true;
    return { buffer: new SharedArrayBuffer(bytes), offset: 0 };
  }
}
