/**
 * A `rate-limit` counter summed across the fleet (issue 43 item 3): decisions are local and
 * synchronous, from a per-key allowance that the background sync refreshes.
 *
 *   take ─► allowance ≥ 1? ─► yes: allowance − 1, consumed + 1 ─► allowed
 *                          └► no:  refused (wait: the bucket's time to its next token)
 *   sync ─► rate script (consumed since the last sync) ─► tokens left ─► allowance = left ÷ N
 *                                                                       − consumed meanwhile
 *
 * 1. A key never synced starts with `burst ÷ N` (N: live members). After a sync its allowance
 *    is its share of the tokens the fleet has left, less what it took while the reply was on
 *    its way; no local refill, so the routers' shares never add up to more than the bucket.
 *    The script holds back what the other routers were granted (and, while a key is young,
 *    the first allowances of those that have not reported yet), so the grants never add up
 *    to more than the bucket (limits-scripts.ts). A grant older than the key's ttl less a
 *    margin is dropped and the key starts again with its first allowance.
 * 2. Only keys taken since the last sync are synced (one script call each).
 * 3. In the fallback (Redis out of reach or slower than its timeout): `failMode: open` counts
 *    by a local GCRA at rate ÷ N, burst ÷ N (made again when N changes); `closed` refuses and
 *    says `unavailable`. Both ways are charged with every admission: shared admissions take
 *    from the local GCRA as well, fallback admissions from the allowance (below 0 if need be)
 *    and are reported at the first sync back. So a router that flaps between the two (syncs
 *    slower than the timeout on a loaded loop) hands out no fresh burst at each switch: without
 *    it a burst of 20 across two lagging routers passed 94.
 * 4. The key table is bounded by `maxKeys`, least recently used forgotten first, as the local
 *    GCRA's.
 */
import type { RateCounter, RateSpec } from '../../src/contracts/policy.ts';
import { GcraCounter, SLACK } from '../../src/policy/gcra.ts';
import type { LimitsState, SyncCall, SyncedCounter } from './limits-sync.ts';

/** One key's allowance. */
interface Allowance {
  /** Events this router may still allow before the next sync. */
  allowance: number;
  /** Allowed since the last sync was sent. */
  consumed: number;
  /** The bucket's time to its next token at the last sync (ms), for Retry-After. */
  wait: number;
  /** When its grant came (`performance.now()`); undefined before the first. */
  syncedAt: number | undefined;
}

/** The fleet rate counter of one rule. */
export class FleetRate implements RateCounter, SyncedCounter {
  readonly #state: LimitsState;
  readonly #spec: RateSpec;
  readonly #prefix: string;
  readonly #failClosed: boolean;
  readonly #interval: number;
  /** The Redis key's ttl: a grant older than this is no longer held back by the others. */
  readonly #ttl: number;
  /** A grant this old is dropped here before the others stop holding it back. */
  readonly #stale: number;
  readonly #keys = new Map<string, Allowance>();
  readonly #used = new Set<string>();
  #fallback: { n: number; gcra: GcraCounter } | undefined;

  /** `prefix`: the Redis key prefix of this counter (fleet prefix + counter id). */
  constructor(state: LimitsState, spec: RateSpec, prefix: string, failClosed: boolean) {
    this.#state = state;
    this.#spec = spec;
    this.#prefix = prefix;
    this.#failClosed = failClosed;
    this.#interval = spec.per / spec.rate;
    // At least four young windows, so that a grant is dropped here (`#stale`) well after the
    // key stops being young and well before the others stop holding it back.
    this.#ttl = Math.max(Math.ceil((spec.burst * spec.per) / spec.rate) + 1000, 4 * state.young);
    this.#stale = this.#ttl - 2 * state.young;
  }

  get size(): number {
    return this.#state.mode === 'shared' ? this.#keys.size : (this.#fallback?.gcra.size ?? 0);
  }

  get unavailable(): boolean {
    return this.#failClosed && this.#state.mode === 'fallback';
  }

  take(key: string, now: number): number {
    if (this.#state.mode === 'fallback') {
      if (this.#failClosed) return Number.POSITIVE_INFINITY;
      const wait = this.#local().take(key, now);
      if (wait === 0) {
        // Counted against the shared allowance too (it may go below 0), and reported at the
        // first sync back: a flap to the fallback and back hands out nothing twice.
        const a = this.#entry(key);
        a.allowance -= 1;
        a.consumed += 1;
        this.#used.add(key);
      }
      return wait;
    }
    let a = this.#entry(key);
    if (a.syncedAt !== undefined && now - a.syncedAt > this.#stale) a = this.#fresh(key);
    this.#used.add(key);
    if (a.allowance >= 1 - SLACK) {
      a.allowance -= 1;
      a.consumed += 1;
      // Taken from the local share too: the fallback's bucket holds what this router used
      // lately, so a switch to it (a slow sync on a loaded loop) hands out no fresh burst.
      this.#local().take(key, now);
      return 0;
    }
    return Math.max(a.wait, this.#interval);
  }

  collect(out: SyncCall[]): void {
    if (this.#used.size === 0) return;
    const { rate, per, burst } = this.#spec;
    const ttl = String(this.#ttl);
    const n = this.#state.share().count;
    const fixed = [String(this.#state.id), String(n), String(burst / n), String(this.#state.young)];
    for (const key of this.#used) {
      const a = this.#keys.get(key);
      if (a === undefined) continue;
      const sent = a.consumed;
      a.consumed = 0;
      out.push({
        script: 'rate',
        key: this.#prefix + key,
        args: [String(rate / per), String(burst), String(sent), ttl, ...fixed],
        settle: ([grant, wait]) => {
          a.allowance = Number(grant) - a.consumed;
          a.wait = Number(wait);
          a.syncedAt = performance.now();
        },
      });
    }
    this.#used.clear();
  }

  resume(): void {
    // Nothing to forget: an allowance is at most burst ÷ N, which a Redis that lost its data
    // holds back for each router not yet reported (young key), and one that kept it as the
    // router's grant; the local fallback counted apart.
  }

  /** Step 1 and 4: the key's allowance, made or moved to the end of the use order. */
  #entry(key: string): Allowance {
    const keys = this.#keys;
    let a = keys.get(key);
    if (a !== undefined) keys.delete(key);
    else {
      if (keys.size >= this.#spec.maxKeys) {
        const oldest = keys.keys().next().value as string;
        keys.delete(oldest);
        this.#used.delete(oldest);
      }
      a = this.#first();
    }
    keys.set(key, a);
    return a;
  }

  /** Step 1: a key's first allowance. */
  #first(): Allowance {
    return { allowance: this.#spec.burst / this.#state.share().count, consumed: 0, wait: 0, syncedAt: undefined };
  }

  /** A grant gone stale (the others no longer hold it back): the key starts again, as new. */
  #fresh(key: string): Allowance {
    const a = this.#first();
    this.#keys.set(key, a);
    return a;
  }

  /** Step 3: the local GCRA at the rule's share of the limit. */
  #local(): GcraCounter {
    const n = this.#state.share().count;
    if (this.#fallback?.n !== n) {
      const { rate, per, burst, maxKeys } = this.#spec;
      this.#fallback = { n, gcra: new GcraCounter({ rate: rate / n, per, burst: Math.max(1, burst / n), maxKeys }) };
    }
    return this.#fallback.gcra;
  }
}
