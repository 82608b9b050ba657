/** The shortest time a key is young in Redis (ms). */
const YOUNG_MIN_MS = 1000;

/**
 * The fleet's counters (issue 43 item 3): `scope: fleet` rate limits and in-flight caps summed
 * across routers through Redis, by batched decisions: no request ever waits on Redis.
 *
 *   request ─► FleetRate / FleetInFlight (allowance here, synchronous) ─► allowed or refused
 *                       ▲ allowances                     │ consumed / held
 *                       └──── sync, every syncInterval ◄─┘  one pipeline: a script call per
 *                                                            key used since the last sync
 *
 * 1. `FleetLimits` lives as long as the router (the `fleet:` section cannot change on reload):
 *    it keeps every fleet counter by id (`<kind> <rule identity> <spec> <failMode>`, as the
 *    local store), so an unchanged rule keeps its counter across reloads. `store()` is the
 *    `CounterStore` view a compile gets (`CompileOptions.fleetCounters`); its `seal()` drops
 *    the counters no rule asked for again.
 * 2. The share (live members from `fleet.liveCount()`, this router's rank among their ids) is
 *    read on each member change. Every `syncInterval` (default 10 ms) each counter adds its
 *    calls and the transport runs them in one round trip; each reply goes back to its counter.
 * 3. A sync that fails, or is not answered within `timeout`, puts the store in the fallback
 *    (counters count locally ÷ N or refuse, by failMode); one sync at a time, so a hung Redis
 *    holds one pipeline, never a request. In the fallback each interval probes Redis (the
 *    in-flight reports, or PING); the first sync answered within `timeout` resumes shared
 *    counting. Each change is logged once and `degraded` says
 *    it (the `switchboard_fleet_limits_degraded` gauge).
 * 4. Before `useFleet` (the fleet starts after the listeners) the share is 1 router.
 */

import type { Logger } from '../../src/base/log.ts';
import type { ConcurrencyCounter, CounterScope, RateCounter, RateSpec } from '../../src/contracts/policy.ts';
import type { CounterStore } from '../../src/policy/counters.ts';
import type { Fleet } from './contract.ts';
import { FleetInFlight } from './limits-in-flight.ts';
import { FleetRate } from './limits-rate.ts';
import type { LimitsMode, LimitsShare, LimitsState, SyncCall, SyncedCounter } from './limits-sync.ts';

/** Runs a sync's calls against Redis (limits-redis.ts; tests may give another). */
export interface LimitsTransport {
  /** Runs the calls in one pipeline; the replies in order. Rejects when Redis fails. */
  run(calls: readonly SyncCall[]): Promise<readonly (readonly [string, string])[]>;
  /** Resolves when Redis answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How a `FleetLimits` is made. */
export interface FleetLimitsOptions {
  /** This router's id (the in-flight hash field). */
  readonly id: string;
  /** Prefix of every Redis key (the fleet's etcd prefix, so two fleets on one Redis do not mix). */
  readonly prefix: string;
  /** `fleet.redis.timeout`: a sync not answered within it is a failure (ms). */
  readonly timeout: number;
  /** Default 10 ms. */
  readonly syncInterval?: number;
  readonly transport: LimitsTransport;
  readonly logger: Logger;
  /** Clock in ms (default `performance.now`). */
  readonly now?: () => number;
}

type FleetCounter = (FleetRate | FleetInFlight) & SyncedCounter;

/** The fleet's counters of one router. */
export class FleetLimits implements LimitsState {
  readonly id: string;
  readonly young: number;
  readonly #prefix: string;
  readonly #timeout: number;
  readonly #transport: LimitsTransport;
  #logger: Logger;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;
  #counters = new Map<string, FleetCounter>();
  #fleet: Pick<Fleet, 'id' | 'liveCount' | 'members'> | undefined;
  #unsubscribe: (() => void) | undefined;
  #share: LimitsShare = { count: 1, rank: 0 };
  #mode: LimitsMode = 'shared';
  /** When the sync in flight was sent; undefined when none is. */
  #syncSent: number | undefined;
  readonly #listeners = new Set<(degraded: boolean) => void>();
  /** Syncs sent and script calls made (the bench's commands per request). */
  readonly stats = { syncs: 0, calls: 0 };

  constructor(options: FleetLimitsOptions) {
    this.id = options.id;
    this.#prefix = options.prefix;
    this.#timeout = options.timeout;
    this.#transport = options.transport;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => performance.now());
    const interval = options.syncInterval ?? 10;
    // Every router's first sync of a key must land while the key is young, or its first
    // allowance is no longer held back for it and the fleet can pass up to that much more. Two
    // syncs and their timeouts (170 ms) is less than a loaded event loop lags (a machine running
    // test files in parallel): a burst of 20 across two routers passed 45–53. A second costs
    // only under-use while a key is new and used by fewer routers than are live.
    this.young = Math.max(YOUNG_MIN_MS, 2 * (interval + options.timeout) + 50);
    this.#timer = setInterval(() => this.#tick(), interval);
    this.#timer.unref();
  }

  get mode(): LimitsMode {
    return this.#mode;
  }

  /** True while the counters count by the fallback (Redis out of reach or too slow). */
  get degraded(): boolean {
    return this.#mode === 'fallback';
  }

  /** Called on each change of `degraded`; returns the unsubscribe. */
  onDegraded(listener: (degraded: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  share(): LimitsShare {
    return this.#share;
  }

  /** Step 4: the fleet whose live members share each limit, and the router's logger from now on. */
  useFleet(fleet: Pick<Fleet, 'id' | 'liveCount' | 'members' | 'onMembers'>, logger?: Logger): void {
    this.#fleet = fleet;
    if (logger !== undefined) this.#logger = logger;
    this.#unsubscribe = fleet.onMembers(() => this.#readShare());
    this.#readShare();
  }

  /** Step 1: the counter store view of one compile. */
  store(): CounterStore {
    return new FleetCounterView(this, new Map());
  }

  /** The counter `id`, made on first use (FleetCounterView). */
  counter(id: string, make: (prefix: string) => FleetCounter): FleetCounter {
    let c = this.#counters.get(id);
    if (c === undefined) {
      c = make(`${this.#prefix}limits/${id.replaceAll(' ', '/')}/`);
      this.#counters.set(id, c);
    }
    return c;
  }

  /** Step 1: keep only the counters of the sealed view. */
  keepOnly(kept: ReadonlyMap<string, FleetCounter>): void {
    this.#counters = new Map(kept);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#unsubscribe?.();
    await this.#transport.close();
  }

  /** Step 2 and 3. */
  #tick(): void {
    const now = this.#now();
    const sent = this.#syncSent;
    if (sent !== undefined) {
      if (now - sent > this.#timeout) this.#setMode('fallback', `no answer within ${this.#timeout}ms`);
      return;
    }
    const calls: SyncCall[] = [];
    for (const c of this.#counters.values()) c.collect(calls, now);
    if (calls.length === 0 && this.#mode === 'shared') return;
    this.#syncSent = now;
    this.stats.syncs++;
    this.stats.calls += calls.length;
    const run = calls.length === 0 ? this.#transport.ping().then(() => []) : this.#transport.run(calls);
    run.then(
      (replies) => {
        this.#syncSent = undefined;
        for (let i = 0; i < calls.length; i++) {
          const reply = replies[i];
          if (reply !== undefined) calls[i]?.settle(reply);
        }
        const took = this.#now() - now;
        if (took > this.#timeout) this.#setMode('fallback', `answered in ${Math.round(took)}ms`);
        else this.#setMode('shared', undefined);
      },
      (e: unknown) => {
        this.#syncSent = undefined;
        this.#setMode('fallback', e instanceof Error ? e.message : String(e));
      },
    );
  }

  #setMode(mode: LimitsMode, reason: string | undefined): void {
    if (mode === this.#mode) return;
    this.#mode = mode;
    if (mode === 'shared') {
      for (const c of this.#counters.values()) c.resume();
      this.#logger.info('fleet limits: redis answers again; shared counting resumes');
    } else {
      this.#logger.warn(
        { reason, members: this.#share.count },
        'fleet limits: redis out of reach; failMode open counts locally by limit ÷ members, closed refuses',
      );
    }
    for (const l of this.#listeners) l(mode === 'fallback');
  }

  #readShare(): void {
    const fleet = this.#fleet;
    if (fleet === undefined) return;
    const count = Math.max(1, fleet.liveCount());
    const ids = fleet
      .members()
      .map((m) => m.id)
      .sort();
    const rank = Math.max(0, ids.indexOf(fleet.id));
    if (count !== this.#share.count || rank !== this.#share.rank) this.#share = { count, rank };
  }
}

/** The `CounterStore` of one compile over a `FleetLimits` (step 1). */
class FleetCounterView implements CounterStore {
  readonly #limits: FleetLimits;
  readonly #kept = new Map<string, FleetCounter>();

  constructor(limits: FleetLimits, kept: Map<string, FleetCounter>) {
    this.#limits = limits;
    this.#kept = kept;
  }

  rate(key: string, spec: RateSpec, scope?: CounterScope): RateCounter {
    const closed = scope?.failMode === 'closed';
    const id = `rate ${key} ${spec.rate}/${spec.per} ${spec.burst} ${spec.maxKeys} ${closed ? 'closed' : 'open'}`;
    const c = this.#limits.counter(id, (prefix) => new FleetRate(this.#limits, spec, prefix, closed));
    this.#kept.set(id, c);
    return c as FleetRate;
  }

  concurrency(key: string, max: number, scope?: CounterScope): ConcurrencyCounter {
    const closed = scope?.failMode === 'closed';
    const id = `concurrency ${key} ${max} ${closed ? 'closed' : 'open'}`;
    const c = this.#limits.counter(id, (prefix) => new FleetInFlight(this.#limits, max, prefix, closed));
    this.#kept.set(id, c);
    return c as FleetInFlight;
  }

  next(): CounterStore {
    return this.#limits.store();
  }

  seal(): void {
    this.#limits.keepOnly(this.#kept);
  }

  entries(): Iterable<readonly [string, RateCounter | ConcurrencyCounter]> {
    return this.#kept.entries();
  }
}
