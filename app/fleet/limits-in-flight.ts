/**
 * An `in-flight` counter summed across the fleet (issue 43 item 3): decisions are local and
 * synchronous, against a per-key cap the background sync refreshes.
 *
 * 1. This router's holds per key are counted here, against a cap per key from its last sync:
 *    what it held then plus its whole share of what the other routers do not hold or may not
 *    take (limits-scripts.ts), so the routers' caps never add up to more than `max`. A key
 *    never synced has its whole share of `max` (`wholeShare`: the remainder rotates among the
 *    routers each second, so `max: 1` on two routers is not always the same router's).
 * 2. The sync reports the count held (absolute) for every key acquired or released since the
 *    last sync, and for every key still held or with a spare cap once per `ttl ÷ 3`, so a live
 *    router's fields never expire and a spare cap is handed back; a dead router's fields expire
 *    `ttl` after its last sync (the slots it held are given back to the fleet). A key with
 *    nothing held or reserved is forgotten `ttl` after its last report.
 * 3. In the fallback: `failMode: open` caps each key at max ÷ N (at least 1); `closed`
 *    refuses and says `unavailable`. Holds taken in either mode are one count, reported when
 *    shared counting resumes.
 */
import type { ConcurrencyCounter, Hold } from '../../src/contracts/policy.ts';
import { type LimitsState, type SyncCall, type SyncedCounter, wholeShare } from './limits-sync.ts';

/** How long a router's in-flight field lives without a sync (ms). */
export const IN_FLIGHT_TTL = 3000;

/** The remainder of a first share rotates once per this many ms. */
const TURN = 1000;

/** One slot taken; gives itself back once. */
class FleetSlot implements Hold {
  #counter: FleetInFlight | undefined;
  readonly #key: string;
  constructor(counter: FleetInFlight, key: string) {
    this.#counter = counter;
    this.#key = key;
  }
  release(): void {
    const c = this.#counter;
    if (c === undefined) return;
    this.#counter = undefined;
    c.give(this.#key);
  }
}

/** One key's count here. */
interface Key {
  held: number;
  /** The cap from the last sync; undefined before the first. */
  cap: number | undefined;
  /** When its count was last reported (ms, the store's clock). */
  reported: number;
}

/** The fleet in-flight counter of one rule. */
export class FleetInFlight implements ConcurrencyCounter, SyncedCounter {
  readonly #state: LimitsState;
  readonly #max: number;
  readonly #prefix: string;
  readonly #failClosed: boolean;
  readonly #keys = new Map<string, Key>();
  readonly #changed = new Set<string>();

  constructor(state: LimitsState, max: number, prefix: string, failClosed: boolean) {
    this.#state = state;
    this.#max = max;
    this.#prefix = prefix;
    this.#failClosed = failClosed;
  }

  get size(): number {
    let n = 0;
    for (const k of this.#keys.values()) if (k.held > 0) n++;
    return n;
  }

  get unavailable(): boolean {
    return this.#failClosed && this.#state.mode === 'fallback';
  }

  acquire(key: string): Hold | undefined {
    const shared = this.#state.mode === 'shared';
    if (!shared && this.#failClosed) return undefined;
    let k = this.#keys.get(key);
    if (k === undefined) {
      k = { held: 0, cap: undefined, reported: 0 };
      this.#keys.set(key, k);
    }
    this.#changed.add(key);
    if (k.held >= this.#cap(k, shared)) return undefined;
    k.held += 1;
    return new FleetSlot(this, key);
  }

  /** A slot given back (FleetSlot). */
  give(key: string): void {
    const k = this.#keys.get(key);
    if (k === undefined || k.held === 0) return;
    k.held -= 1;
    this.#changed.add(key);
  }

  collect(out: SyncCall[], now: number): void {
    for (const [key, k] of this.#keys) {
      const reserves = k.held > 0 || (k.cap ?? 0) > 0;
      if (reserves && now - k.reported >= IN_FLIGHT_TTL / 3) this.#changed.add(key);
      else if (!reserves && now - k.reported >= IN_FLIGHT_TTL && !this.#changed.has(key)) this.#keys.delete(key);
    }
    const { count, rank } = this.#state.share();
    const fixed = [
      String(IN_FLIGHT_TTL),
      String(count),
      String(Math.ceil(this.#max / count)),
      String(this.#state.young),
      String(this.#max),
      String(rank),
    ];
    for (const key of this.#changed) {
      const k = this.#keys.get(key);
      if (k === undefined) continue;
      const held = k.held;
      k.reported = now;
      out.push({
        script: 'inFlight',
        key: this.#prefix + key,
        args: [this.#state.id, String(held), ...fixed],
        settle: ([cap]) => {
          k.cap = Number(cap);
        },
      });
    }
    this.#changed.clear();
  }

  resume(): void {
    for (const [key, k] of this.#keys) {
      k.cap = undefined;
      this.#changed.add(key);
    }
  }

  /** Step 1 and 3: this key's cap here now. */
  #cap(k: Key, shared: boolean): number {
    const { count, rank } = this.#state.share();
    if (!shared) return Math.max(1, Math.floor(this.#max / count));
    return k.cap ?? wholeShare(this.#max, count, rank, Math.floor(Date.now() / TURN));
  }
}
