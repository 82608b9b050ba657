/**
 * The caps of the `worker` panel, counted once for the process: every thread admits through
 * one SharedArrayBuffer with Atomics (4 threads with `maxConnections: 8` hold 8, not 32).
 *
 *   Int32 words
 *   [0]                                  open connections, all listeners
 *   [1 .. 1+L)                           listener name hashes (slot claimed by compare-exchange)
 *   [1+L .. 1+2L)                        open connections per listener slot
 *   [1+2L .. +W×(1+L))                   per worker: its share of [0] and of each listener slot
 *   [.. +C)                              per-client table: (tag << 16 | count) words, by the
 *                                        client key (client-key.ts), taken at accept or, on a
 *                                        PROXY listener, by `client` after the header
 *
 * 1. A cap is checked and taken in one compare-exchange loop, so two threads never both take
 *    the last place. A refusal undoes what this call took, in reverse order.
 * 2. Listener slots are found by a 32-bit FNV-1a hash of the name, probed linearly; two names
 *    with the same hash would share a count (1 in 2^32). When all L slots are taken (L distinct
 *    listener names in the life of the process) a new listener's own cap is not enforced; the
 *    global and per-client caps still are.
 * 3. Per-client counts live in an open-addressing table of C words: the low 16 bits of the
 *    address hash pick the home word, the high 16 bits are the tag kept beside the count, so
 *    two clients share a count only when their whole 32-bit hashes collide and they probe to
 *    the same word. A client whose PROBES words are all taken by others is admitted uncounted
 *    (fail open rather than refuse an innocent client). Two threads admitting the first
 *    connections of one new client at the same instant can give it two words: its cap is then
 *    relaxed by one until one of them empties. Counts are capped at 65535 per client.
 * 4. Each worker mirrors its own share of the global and listener counts; when a worker dies
 *    the main thread subtracts that share (`forgetWorker`), so a crash leaves no phantom
 *    connection. Per-client counts are not mirrored: a crash clears the whole table (the caps
 *    are relaxed for the connections still open, never stuck at the limit).
 */
import type { Limits } from '../config/schema.ts';
import { type Admission, REFUSED } from './admission.ts';

const L = 256;
const KEYS = 1;
const COUNTS = KEYS + L;
const MIRRORS = COUNTS + L;
const MIRROR = 1 + L;
const C = 65_536;
const PROBES = 16;
const MAX_COUNT = 0xffff;

/** The buffer shared by the main thread and its workers; plain data that survives `structuredClone`. */
export interface SharedAdmissionState {
  readonly workers: number;
  readonly buffer: SharedArrayBuffer;
}

/** FNV-1a over the UTF-16 code units of `s` (addresses and names are ASCII). */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Takes one place in word `i` unless it already holds `cap`; true when taken. */
function take(a: Int32Array, i: number, cap: number): boolean {
  for (;;) {
    const v = Atomics.load(a, i);
    if (v >= cap) return false;
    if (Atomics.compareExchange(a, i, v, v + 1) === v) return true;
  }
}

/** Counts in one SharedArrayBuffer; `worker` is the thread index whose share is mirrored. */
export class SharedAdmission implements Admission {
  readonly state: SharedAdmissionState;
  readonly #a: Int32Array;
  readonly #mirror: number;
  readonly #clients: number;

  private constructor(state: SharedAdmissionState, worker: number) {
    this.state = state;
    this.#a = new Int32Array(state.buffer);
    this.#mirror = MIRRORS + Math.max(0, worker) * MIRROR;
    this.#clients = MIRRORS + state.workers * MIRROR;
  }

  /** The main thread's instance: allocates the buffer for `workers` threads. */
  static create(workers: number): SharedAdmission {
    const buffer = new SharedArrayBuffer(4 * (MIRRORS + workers * MIRROR + C));
    return new SharedAdmission({ workers, buffer }, -1);
  }

  /** Thread `worker`'s view on the main thread's buffer. */
  static view(state: SharedAdmissionState, worker: number): SharedAdmission {
    if (worker < 0 || worker >= state.workers) throw new RangeError(`worker ${worker} outside 0..${state.workers - 1}`);
    return new SharedAdmission(state, worker);
  }

  listener(name: string): number {
    const a = this.#a;
    // Stored as an Int32 word: compare in the same signed form.
    const h = hash32(name) | 0 || 1;
    for (let j = 0; j < L; j++) {
      const i = ((h >>> 0) + j) % L;
      const k = Atomics.load(a, KEYS + i);
      if (k === h) return i;
      if (k === 0) {
        const was = Atomics.compareExchange(a, KEYS + i, 0, h);
        if (was === 0 || was === h) return i;
      }
    }
    return -1;
  }

  admit(listener: number, key: string | undefined, limits: Limits, listenerCap: number | undefined): number {
    const a = this.#a;
    if (!take(a, 0, limits.maxConnections)) return REFUSED;
    if (listener >= 0) {
      if (listenerCap === undefined) Atomics.add(a, COUNTS + listener, 1);
      else if (!take(a, COUNTS + listener, listenerCap)) {
        Atomics.sub(a, 0, 1);
        return REFUSED;
      }
    }
    let handle = 0;
    if (key !== undefined && limits.maxConnectionsPerClient > 0) {
      handle = this.client(key, limits);
      if (handle === REFUSED) {
        if (listener >= 0) Atomics.sub(a, COUNTS + listener, 1);
        Atomics.sub(a, 0, 1);
        return REFUSED;
      }
    }
    Atomics.add(a, this.#mirror, 1);
    if (listener >= 0) Atomics.add(a, this.#mirror + 1 + listener, 1);
    return handle;
  }

  /** Word index + 1 of the client's count (0 = admitted uncounted), or REFUSED at the cap. */
  client(key: string, limits: Limits): number {
    const cap = Math.min(limits.maxConnectionsPerClient, MAX_COUNT);
    const a = this.#a;
    const h = hash32(key);
    const tag = h >>> 16 || 1;
    const home = h & (C - 1);
    for (;;) {
      let free = -1;
      for (let j = 0; j < PROBES; j++) {
        const i = this.#clients + ((home + j) & (C - 1));
        for (;;) {
          const w = Atomics.load(a, i);
          if (w === 0) {
            if (free < 0) free = i;
            break;
          }
          if (w >>> 16 !== tag) break;
          if ((w & MAX_COUNT) >= cap) return REFUSED;
          if (Atomics.compareExchange(a, i, w, w + 1) === w) return i + 1;
        }
      }
      if (free < 0) return 0;
      if (Atomics.compareExchange(a, free, 0, (tag << 16) | 1) === 0) return free + 1;
      // The free word was taken meanwhile (maybe by this very client): look again.
    }
  }

  release(listener: number, ip: string, handle: number): void {
    const a = this.#a;
    Atomics.sub(a, 0, 1);
    Atomics.sub(a, this.#mirror, 1);
    if (listener >= 0) {
      Atomics.sub(a, COUNTS + listener, 1);
      Atomics.sub(a, this.#mirror + 1 + listener, 1);
    }
    if (handle <= 0) return;
    const i = handle - 1;
    const tag = hash32(ip) >>> 16 || 1;
    for (;;) {
      const w = Atomics.load(a, i);
      // Cleared by a crash (forgetWorker) or reused since: nothing of ours left to give back.
      if (w >>> 16 !== tag || (w & MAX_COUNT) === 0) return;
      const next = (w & MAX_COUNT) === 1 ? 0 : w - 1;
      if (Atomics.compareExchange(a, i, w, next) === w) return;
    }
  }

  get open(): number {
    return Atomics.load(this.#a, 0);
  }

  /** Main thread, after worker `worker` ended: takes back its share of every count. */
  forgetWorker(worker: number): void {
    const a = this.#a;
    const base = MIRRORS + worker * MIRROR;
    Atomics.sub(a, 0, Atomics.exchange(a, base, 0));
    for (let i = 0; i < L; i++) Atomics.sub(a, COUNTS + i, Atomics.exchange(a, base + 1 + i, 0));
    for (let i = 0; i < C; i++) Atomics.store(a, this.#clients + i, 0);
  }
}
