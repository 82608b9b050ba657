/**
 * Rapid reset (CVE-2023-44487): a client that opens streams and resets them at once makes the
 * router open (and cancel) upstream streams at no cost to itself. Two defences:
 *
 * 1. stream.ts starts routing an HTTP/2 stream only after the reads of its event-loop turn were
 *    handled (after-reads.ts: one setImmediate per turn for all its streams), so a stream reset
 *    in the same reads as its HEADERS opens nothing upstream; a stream reset while it waited
 *    for an upstream slot or a dial opens nothing either (upstream-h2.ts `ClientWatch`). Only
 *    deferring every stream works: node runs the 'close' of a reset stream after the whole
 *    read was parsed, so marking a connection at its first reset let a read's worth of pairs
 *    (51 of 3,000 in the test) through before the mark.
 * 2. `ResetBudget` counts the streams a client reset before any response went out: at most
 *    `MAX_RESETS_PER_CONNECTION` per connection and `MAX_RESETS_PER_ADDRESS` per client address
 *    within a `RESET_WINDOW_MS` window. Past either, the connection that reset gets GOAWAY
 *    ENHANCE_YOUR_CALM and is closed (its other streams end with it). node:http2 has no option
 *    for this. Per-address counts live in a bounded map per panel runtime (worker threads count
 *    their own connections).
 */
import type { Http2Session } from 'node:http2';
import type { PanelRuntime } from '../../src/panel/contract.ts';
import { H2_ERROR } from '../../src/peek/h2c.ts';

/** Resets one connection may make within a window. */
export const MAX_RESETS_PER_CONNECTION = 100;
/** Resets the connections of one client address may make within a window, together. */
export const MAX_RESETS_PER_ADDRESS = 500;
/** The window the counts above are taken over. */
export const RESET_WINDOW_MS = 10_000;
/** Addresses tracked at once (the oldest window is dropped beyond it). */
const MAX_ADDRESSES = 10_000;

interface Window {
  start: number;
  count: number;
}

const kResets = Symbol('switchboard.http2.resets');
type Counted = Http2Session & { [kResets]?: Window };

/** Adds one to `w` (a new window once the old one is over); returns the count. */
function bump(w: Window, now: number): number {
  if (now - w.start >= RESET_WINDOW_MS) {
    w.start = now;
    w.count = 0;
  }
  return ++w.count;
}

/** Client resets per connection and per address, and what happens past the budget. */
export class ResetBudget {
  readonly #byAddress = new Map<string, Window>();

  /**
   * A stream of `session` from `address` was reset by the client before its response. Returns
   * true when that took the connection or the address over budget: the session is then sent
   * GOAWAY ENHANCE_YOUR_CALM and closed.
   */
  note(session: Http2Session, address: string): boolean {
    if (session.destroyed) return false;
    const now = Date.now();
    let own = (session as Counted)[kResets];
    if (own === undefined) {
      own = { start: now, count: 0 };
      (session as Counted)[kResets] = own;
    }
    const mine = bump(own, now);
    const shared = bump(this.#windowOf(address, now), now);
    if (mine <= MAX_RESETS_PER_CONNECTION && shared <= MAX_RESETS_PER_ADDRESS) return false;
    // node sends GOAWAY with a code given as the only argument (@types/node lists an Error there).
    (session as unknown as { destroy(code: number): void }).destroy(H2_ERROR.ENHANCE_YOUR_CALM);
    return true;
  }

  #windowOf(address: string, now: number): Window {
    const map = this.#byAddress;
    let w = map.get(address);
    if (w !== undefined) return w;
    if (map.size >= MAX_ADDRESSES) {
      for (const [a, old] of map) if (now - old.start >= RESET_WINDOW_MS) map.delete(a);
      if (map.size >= MAX_ADDRESSES) map.delete(map.keys().next().value as string);
    }
    w = { start: now, count: 0 };
    map.set(address, w);
    return w;
  }
}

/** The budgets of each panel runtime (one per runtime, gone with it). */
const budgets = new WeakMap<PanelRuntime, ResetBudget>();

/** The reset budget of `runtime`'s panel. */
export function resetBudgetOf(runtime: PanelRuntime): ResetBudget {
  let b = budgets.get(runtime);
  if (b === undefined) {
    b = new ResetBudget();
    budgets.set(runtime, b);
  }
  return b;
}
