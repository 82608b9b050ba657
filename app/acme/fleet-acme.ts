/**
 * ACME across the fleet (issue 43 item 2, the certmagic model): what the manager asks of etcd
 * when `fleet:` is configured.
 *
 * 1. Storage: `FleetAcmeStorage` (fleet-storage.ts) replaces the disk for every section.
 * 2. One order per name: `underLock(name)` takes `<prefix>locks/acme/order/<name>` with
 *    `tryLock` (a lease of `fleet.leaseTtl`, kept alive while held), then reads the store
 *    again: a certificate another router stored meanwhile is taken, not ordered. Held by
 *    another router: `busy`, and the manager asks again after one lease TTL; the watch (3)
 *    usually brings the certificate first. A holder that dies stops its keepalives, etcd drops
 *    the lock when the lease runs out, and the next router whose queue wants the name orders.
 *    A failed order leaves `<prefix>acme/failures/<name>` ({failures, retryAt, error, by}): the
 *    next holder waits until `retryAt` (`backoff`), so the fleet backs off as one router
 *    would (30 s doubling to 6 h) instead of each router trying once per lease TTL; a success
 *    deletes it.
 * 3. Certificates by watch: `<prefix>acme/certs/` is watched; each put is decrypted and handed
 *    to the manager, which serves it on the listeners that want the name and schedules its
 *    renewal (whoever takes the lock then renews; the others pick the result up here).
 * 4. Challenges: fleet-challenges.ts.
 * 5. etcd down (the fleet degraded): served certificates stay; `underLock` answers `degraded`
 *    without a CA call; one log line when it starts and one when it ends. The gauge is the
 *    fleet's own `switchboard_fleet_degraded` (app/metrics/fleet.ts).
 */
import type { Logger } from '../../src/base/log.ts';
import type { Fleet, FleetChangeBatch, FleetWatch } from '../fleet/contract.ts';
import { FleetChallenges } from './fleet-challenges.ts';
import type { KeySealer } from './fleet-crypto.ts';
import { CERTS, FleetAcmeStorage } from './fleet-storage.ts';
import { backoff } from './keeper.ts';
import type { IssuedSink } from './order.ts';
import type { StoredCertificate } from './store.ts';

/** What an order under the lock came to (the manager's own bookkeeping is done by then). */
export type PlaceResult =
  | { readonly kind: 'ok' }
  | { readonly kind: 'failed'; readonly error: string }
  | { readonly kind: 'skipped' };

/** What `underLock` did. */
export type LockOutcome =
  | { readonly kind: 'ordered' }
  | { readonly kind: 'stored'; readonly stored: StoredCertificate }
  | { readonly kind: 'busy' }
  | { readonly kind: 'degraded' }
  | { readonly kind: 'backoff'; readonly until: number; readonly error: string };

/** The JSON value of `acme/failures/<name>`. */
interface FailureRecord {
  readonly failures: number;
  readonly retryAt: number;
  readonly error: string;
  readonly by: string;
}

/** What the fleet part of ACME needs. */
export interface FleetAcmeOptions {
  readonly fleet: Fleet;
  /** `fleet.etcd.prefix` (for logs and the storage's `where`). */
  readonly prefix: string;
  /** Undefined when no key is configured: no order (the storage probe says why). */
  readonly sealer: KeySealer | undefined;
  /** The order lock's lease TTL (ms): `fleet.leaseTtl`. */
  readonly lockTtl: number;
  /** This router's own sink (IssuedCertificates on every thread). */
  readonly sink: IssuedSink;
  readonly logger: Logger;
}

/** What the manager is told by the watches. */
export interface FleetAcmeHandlers {
  /** A certificate stored by any router (this one included), decrypted. */
  certificate(stored: StoredCertificate): void;
  /** The listeners of this router that want `name` (a TLS-ALPN-01 challenge is answered on each). */
  listenersFor(name: string): string[];
  /** How long after the fleet's `failures`-th failed order of a name the next may start. */
  retryAfter(failures: number): number;
}

const WATCH_RETRY_MIN_MS = 1_000;
const WATCH_RETRY_MAX_MS = 30_000;

/** The fleet side of one router's ACME manager. */
export class FleetAcme {
  readonly storage: FleetAcmeStorage;
  readonly lockTtl: number;
  readonly #fleet: Fleet;
  readonly #logger: Logger;
  readonly #sealer: KeySealer | undefined;
  readonly #sink: IssuedSink;
  readonly #certNames = new Set<string>();
  readonly #watches: FleetWatch[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  #challenges: FleetChallenges | undefined;
  #retryAfter: (failures: number) => number = () => 0;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(o: FleetAcmeOptions) {
    this.#fleet = o.fleet;
    this.#logger = o.logger;
    this.#sealer = o.sealer;
    this.#sink = o.sink;
    this.lockTtl = o.lockTtl;
    this.storage = new FleetAcmeStorage(o.fleet, o.prefix, o.sealer, () => [...this.#certNames]);
  }

  /** Starts both watches (retried with backoff while etcd does not answer) and the degraded log lines. */
  start(handlers: FleetAcmeHandlers): void {
    const challenges = new FleetChallenges({
      fleet: this.#fleet,
      sealer: this.#sealer,
      sink: this.#sink,
      logger: this.#logger,
      listenersFor: handlers.listenersFor,
    });
    this.#challenges = challenges;
    this.#retryAfter = handlers.retryAfter;
    this.#watch(CERTS, (b) => this.#certs(b, handlers), 1);
    this.#watch('acme/challenges/', (b) => challenges.apply(b), 1);
    this.#unsubscribe = this.#fleet.onDegraded((degraded) => {
      if (degraded)
        this.#logger.warn(
          { reason: this.#fleet.degradedReason },
          'acme: etcd unreachable; certificates keep serving from memory, no new order until it answers',
        );
      else this.#logger.info('acme: etcd answers again; orders resume');
    });
  }

  /** True while etcd cannot be reached. */
  get degraded(): boolean {
    return this.#fleet.degraded;
  }

  /** The sink an order publishes its challenges through (etcd, then this router). */
  orderSink(): IssuedSink {
    return this.#challenges?.orderSink() ?? this.#sink;
  }

  /**
   * Runs `order` under the fleet's lock for `name` (step 2). `fresh(stored)`: whether a stored
   * certificate makes the order needless. The lock is released when `order` settles; it
   * rejects as `order` or the storage read does.
   */
  async underLock(
    name: string,
    fresh: (stored: StoredCertificate) => boolean,
    order: () => Promise<PlaceResult>,
  ): Promise<LockOutcome> {
    if (this.#fleet.degraded) return { kind: 'degraded' };
    const lock = await this.#fleet.tryLock(`acme/order/${name}`, this.lockTtl);
    if (lock === undefined) return { kind: 'busy' };
    const lost = lock.onLost(() =>
      this.#logger.warn(
        { name },
        'acme: the order lock was lost (etcd lease); the order goes on, another router may start one',
      ),
    );
    try {
      const stored = await this.storage.load(name);
      if (stored !== undefined && fresh(stored)) return { kind: 'stored', stored };
      const failed = await this.#failure(name);
      if (failed !== undefined && failed.retryAt > Date.now())
        return { kind: 'backoff', until: failed.retryAt, error: `${failed.error} (ordered by ${failed.by})` };
      const result = await order();
      await this.#record(name, result, failed?.failures ?? 0);
      return { kind: 'ordered' };
    } finally {
      lost();
      await lock.release();
    }
  }

  /** Stops the watches and timers. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe?.();
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await Promise.all(this.#watches.splice(0).map((w) => w.close().catch(() => undefined)));
  }

  async #failure(name: string): Promise<FailureRecord | undefined> {
    const v = await this.#fleet.get(`acme/failures/${name}`);
    if (v === undefined) return undefined;
    try {
      const r = JSON.parse(v) as Partial<FailureRecord>;
      if (typeof r.failures !== 'number' || typeof r.retryAt !== 'number') return undefined;
      return { failures: r.failures, retryAt: r.retryAt, error: String(r.error ?? ''), by: String(r.by ?? '') };
    } catch {
      return undefined;
    }
  }

  /** Writes (a failure) or clears (a success) the fleet's failure record; a write that fails is logged. */
  async #record(name: string, result: PlaceResult, before: number): Promise<void> {
    const key = `acme/failures/${name}`;
    try {
      if (result.kind === 'ok' && before > 0) await this.#fleet.delete(key);
      if (result.kind !== 'failed') return;
      const failures = before + 1;
      const record: FailureRecord = {
        failures,
        retryAt: Date.now() + this.#retryAfter(failures),
        error: result.error,
        by: this.#fleet.id,
      };
      await this.#fleet.put(key, JSON.stringify(record));
    } catch (e) {
      this.#logger.warn({ name, err: (e as Error).message }, 'acme: the fleet failure record not written');
    }
  }

  #certs(batch: FleetChangeBatch, handlers: FleetAcmeHandlers): void {
    if (batch.initial) this.#certNames.clear();
    for (const c of batch.changes) {
      if (c.kind === 'delete') {
        this.#certNames.delete(c.key);
        continue;
      }
      this.#certNames.add(c.key);
      try {
        handlers.certificate(this.storage.decode(c.key, c.value));
      } catch (e) {
        this.#logger.error({ name: c.key, err: (e as Error).message }, 'acme: a fleet certificate not installed');
      }
    }
  }

  #watch(prefix: string, onChange: (b: FleetChangeBatch) => void, attempt: number): void {
    if (this.#closed) return;
    this.#fleet.watchPrefix(prefix, onChange).then(
      (w) => {
        if (this.#closed) void w.close();
        else this.#watches.push(w);
      },
      (e: unknown) => {
        if (this.#closed) return;
        const retry = backoff(WATCH_RETRY_MIN_MS, WATCH_RETRY_MAX_MS, attempt);
        if (attempt === 1)
          this.#logger.warn(
            { prefix, err: (e as Error).message, retryInMs: retry },
            'acme: cannot watch the fleet yet; certificates and challenges of other routers wait for etcd',
          );
        const t = setTimeout(() => {
          this.#timers.delete(t);
          this.#watch(prefix, onChange, attempt + 1);
        }, retry);
        t.unref();
        this.#timers.add(t);
      },
    );
  }
}
