/**
 * Per-connection deadlines on shared timers (issue 18): the peek deadline, the connect timeout,
 * the half-close bound, the connection lifetime and the splice's idle tick. Every connection
 * used to start four Node timers (`setTimeout`, then `clearTimeout` within a millisecond or
 * two): a `Timeout` object each, a timer-list insert and removal, and a list made and dropped
 * whenever the last timer of a duration was cleared, about 2% of the `net` panel's CPU per new
 * connection (bench/README.md "Shared deadlines").
 *
 *   arm(d, ms) ─► d joins the queue of its duration (ms) ─► one Node timer per queue, for its head
 *   disarm(d)  ─► d leaves it (the timer stays armed; it re-arms for the head when it fires)
 *
 * 1. One queue per duration: deadlines of one duration join in the order they are due, so a
 *    queue is a plain doubly linked list (its nodes are the `Deadline` objects, made once by
 *    their owner and re-armed as often as it likes): arm and disarm are O(1), no allocation.
 * 2. A queue's timer is armed for its head. Disarming the head does not touch it: the timer fires
 *    as planned, finds nothing due and re-arms for the new head, at most once per duration.
 *    A queue that is still empty when its timer fires is dropped.
 * 3. A deadline fires when `performance.now()` has reached it, at the earliest 1 ms before (a
 *    Node timer runs on the loop's clock, which may lag `performance.now()` by up to 1 ms) and
 *    late by what the event loop is late, as a `setTimeout` would.
 * 4. The timers are unref'd: a deadline belongs to a socket, which holds the loop open itself.
 * 5. A `fire` that throws does not stop the others: the throw is reported on the next tick
 *    (Node's uncaughtException, as a throwing `setTimeout` callback would be) once the due
 *    deadlines have all run.
 */
import { performance } from 'node:perf_hooks';

/** What a queue holds (a `Deadline` of any argument type). */
export interface Armable {
  at: number;
  prev: Armable | undefined;
  next: Armable | undefined;
  queue: Queue | undefined;
  run(): void;
}

/** One deadline: made once by its owner, armed and disarmed as often as it likes. */
export class Deadline<T> implements Armable {
  readonly #fire: (arg: T) => void;
  readonly #arg: T;
  /** `performance.now()` when it is due; 0 when not armed. */
  at = 0;
  prev: Armable | undefined = undefined;
  next: Armable | undefined = undefined;
  queue: Queue | undefined = undefined;

  constructor(fire: (arg: T) => void, arg: T) {
    this.#fire = fire;
    this.#arg = arg;
  }

  /** Calls `fire(arg)` (the queue does, once it is due). */
  run(): void {
    this.#fire(this.#arg);
  }
}

/** The deadlines of one duration, in the order they are due, and the timer for the first. */
export class Queue {
  readonly ms: number;
  head: Armable | undefined = undefined;
  tail: Armable | undefined = undefined;
  timer: NodeJS.Timeout | undefined = undefined;

  constructor(ms: number) {
    this.ms = ms;
  }
}

const queues = new Map<number, Queue>();

/** Arms `d` to fire `ms` from now (re-arms it when it was armed). `ms` below 1 counts as 1. */
export function arm(d: Armable, ms: number): void {
  if (d.queue !== undefined) disarm(d);
  const key = ms >= 1 ? Math.ceil(ms) : 1;
  let q = queues.get(key);
  if (q === undefined) {
    q = new Queue(key);
    queues.set(key, q);
  }
  d.at = performance.now() + key;
  d.queue = q;
  // Due last among its duration (the clock does not go back): appended.
  const tail = q.tail;
  d.prev = tail;
  if (tail !== undefined) tail.next = d;
  else q.head = d;
  q.tail = d;
  if (q.timer === undefined) {
    q.timer = setTimeout(run, key, q);
    q.timer.unref();
  }
}

/** Disarms `d` (nothing when it is not armed). */
export function disarm(d: Armable): void {
  const q = d.queue;
  if (q === undefined) return;
  const { prev, next } = d;
  if (prev !== undefined) prev.next = next;
  else q.head = next;
  if (next !== undefined) next.prev = prev;
  else q.tail = prev;
  d.prev = undefined;
  d.next = undefined;
  d.queue = undefined;
  d.at = 0;
}

function run(q: Queue): void {
  // q.timer stays set while the due deadlines run: one that re-arms on this queue (the splice's
  // tick) must not start a second timer; the one below is for the head after the walk.
  // Due within 1 ms: the loop's clock, which started this timer, may lag performance.now().
  const now = performance.now() + 1;
  let failure: { err: unknown } | undefined;
  for (let d = q.head; d !== undefined && d.at <= now; d = q.head) {
    disarm(d);
    try {
      d.run();
    } catch (err) {
      failure ??= { err };
    }
  }
  q.timer = undefined;
  const head = q.head;
  if (head !== undefined) {
    q.timer = setTimeout(run, Math.max(1, Math.ceil(head.at - performance.now())), q);
    q.timer.unref();
  } else if (queues.get(q.ms) === q) queues.delete(q.ms);
  if (failure !== undefined) {
    const { err } = failure;
    process.nextTick(() => {
      throw err;
    });
  }
}

/** Deadlines armed now, over every queue (tests, diagnostics). */
export function armedDeadlines(): number {
  let n = 0;
  for (const q of queues.values()) for (let d = q.head; d !== undefined; d = d.next) n++;
  return n;
}
