/**
 * The fleet layer of backend state (backend-state.ts) kept in step with etcd, and the writes of
 * `scope=fleet` calls. Loaded only when `fleet:` is configured; it speaks to etcd only through
 * the `Fleet` contract.
 *
 * 1. Watch `<prefix>backends/` (`Fleet.watchPrefix`): the first load (and a reread after an
 *    outage) replaces the fleet layer whole, each later change replaces one backend's record.
 *    etcd delivers a change to every watcher within milliseconds, well inside the 1 s the
 *    issue asks. A value that is not a record is logged and counts as absent.
 * 2. etcd unreachable: the layer keeps the last records it saw (the routers keep serving with
 *    the last state); the watch resumes or rereads when etcd is back. A watch that could not
 *    even start is retried (backoff 200 ms to 2 s, and at once when the fleet stops being degraded).
 * 3. A write (`write`): read the key, apply the change (backend-state-record.ts `change`), put
 *    it, or delete it when nothing is left to say. etcd unreachable rejects with the fleet's
 *    `SWB_ERR_FLEET` error (the admin answers 503). Then applied here at once, unless a watch
 *    batch arrived meanwhile (it may be older or newer than this write; the watch then delivers
 *    this write too, in etcd's order). Two calls on one backend at once: the last put wins for
 *    the whole record (there is no compare-and-swap; admin calls are rare).
 */
import type { Logger } from '../../src/base/log.ts';
import type { BackendStates, FleetBackendWriter } from './backend-state.ts';
import { change, type OverrideChange, type OverrideRecord, parse, serialize } from './backend-state-record.ts';
import type { Fleet, FleetChangeBatch, FleetWatch } from './contract.ts';

/** The key prefix of backend records, relative to the fleet prefix. */
export const BACKENDS_PREFIX = 'backends/';

/** Keeps `states`' fleet layer in step with etcd and writes fleet-scoped calls (see the file header). */
export class FleetBackendSync implements FleetBackendWriter {
  readonly #fleet: Fleet;
  readonly #states: BackendStates;
  readonly #logger: Logger;
  #watch: FleetWatch | undefined;
  #batches = 0;
  #retry: NodeJS.Timeout | undefined;
  #delay = 200;
  #starting = false;
  #closed = false;
  readonly #detach: () => void;
  readonly #unsubscribe: () => void;

  /** Starts watching (step 1; step 2 when etcd does not answer) and attaches to `states`. */
  static async start(fleet: Fleet, states: BackendStates, logger: Logger): Promise<FleetBackendSync> {
    const sync = new FleetBackendSync(fleet, states, logger);
    await sync.#startWatch();
    return sync;
  }

  private constructor(fleet: Fleet, states: BackendStates, logger: Logger) {
    this.#fleet = fleet;
    this.#states = states;
    this.#logger = logger;
    this.#detach = states.attachFleet(this);
    this.#unsubscribe = fleet.onDegraded((degraded) => {
      if (!degraded && this.#watch === undefined) {
        clearTimeout(this.#retry);
        void this.#startWatch();
      }
    });
  }

  /** Step 3. */
  async write(id: string, c: OverrideChange): Promise<void> {
    const key = BACKENDS_PREFIX + id;
    const batches = this.#batches;
    const stored = await this.#fleet.get(key);
    const before = stored === undefined ? undefined : parse(stored);
    const next = change(before, c, this.#fleet.id, new Date());
    if (next === undefined) await this.#fleet.delete(key);
    else await this.#fleet.put(key, serialize(next));
    if (this.#batches === batches) this.#states.putFleet(id, next);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#unsubscribe();
    this.#detach();
    await this.#watch?.close();
  }

  async #startWatch(): Promise<void> {
    if (this.#starting || this.#closed) return;
    this.#starting = true;
    try {
      const watch = await this.#fleet.watchPrefix(BACKENDS_PREFIX, (batch) => this.#onBatch(batch));
      if (this.#closed) await watch.close();
      else this.#watch = watch;
      if (this.#delay > 200) this.#logger.info({}, 'fleet: backend state watched (etcd answers)');
    } catch (e) {
      // One line when it first fails, not one per retry.
      if (this.#delay === 200) {
        this.#logger.warn(
          { err: (e as Error).message },
          'fleet: backend state not watched yet (etcd unreachable); the last state stays applied, retrying',
        );
      }
      if (!this.#closed) {
        this.#retry = setTimeout(() => void this.#startWatch(), this.#delay);
        this.#delay = Math.min(this.#delay * 2, 2000);
      }
    } finally {
      this.#starting = false;
    }
  }

  /** Step 1. */
  #onBatch(batch: FleetChangeBatch): void {
    this.#batches++;
    if (batch.initial) {
      const records = new Map<string, OverrideRecord>();
      for (const c of batch.changes) {
        const r = c.kind === 'put' ? this.#parse(c.key, c.value) : undefined;
        if (r !== undefined) records.set(c.key, r);
      }
      this.#states.replaceFleet(records);
      return;
    }
    for (const c of batch.changes) {
      const r = c.kind === 'put' ? this.#parse(c.key, c.value) : undefined;
      this.#states.putFleet(c.key, r);
      this.#logger.info(
        r === undefined
          ? { backend: c.key, scope: 'fleet' }
          : { backend: c.key, scope: 'fleet', state: r.state, weight: r.weight ?? null, setBy: r.setBy },
        r === undefined ? 'fleet: backend override cleared' : `fleet: backend ${r.state}`,
      );
    }
  }

  #parse(id: string, value: string): OverrideRecord | undefined {
    const r = parse(value);
    if (r === undefined)
      this.#logger.warn({ key: BACKENDS_PREFIX + id }, 'fleet: a backend key that is not a record; skipped');
    return r;
  }
}
