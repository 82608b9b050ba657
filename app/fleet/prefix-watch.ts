/**
 * `Fleet.watchPrefix` (contract.ts) on etcd3, also what keeps the member list:
 *
 * 1. Read every key under the prefix in one range request (one revision) and hand them over as
 *    one batch with `initial: true` (the keys not in it do not exist).
 * 2. Watch from the next revision; each watch response is one batch (a transaction arrives
 *    whole), so `entries()` always equals the store at some revision.
 * 3. etcd going away: etcd3's watch manager reconnects (with backoff) and resumes from the last
 *    revision it saw, so the changes made meanwhile arrive in order. When it cannot resume
 *    (history compacted) or the first read fails, everything is read again after a backoff
 *    (steps 1–2 again), until `close()`.
 */
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import { type Backoff, exponentialBackoff } from '../../address-books/etcd/client.ts';
import type { FleetChange, FleetChangeBatch, FleetWatch } from './contract.ts';

/** Whether etcd answered (true) or failed (false); the fleet's degraded state listens. */
export type Reachability = (reachable: boolean) => void;

/** One watched prefix; `ready` settles after the first read and watch (or their first failure). */
export class PrefixWatch implements FleetWatch {
  readonly ready: Promise<void>;
  readonly #client: Etcd3;
  readonly #prefix: string;
  readonly #onChange: (batch: FleetChangeBatch) => void;
  readonly #reachable: Reachability;
  #entries = new Map<string, string>();
  #watcher: Watcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(client: Etcd3, prefix: string, onChange: (batch: FleetChangeBatch) => void, reachable: Reachability) {
    this.#client = client;
    this.#prefix = prefix;
    this.#onChange = onChange;
    this.#reachable = reachable;
    this.ready = this.#resync();
    // A first read that failed is retried in the background; `ready` still rejects for the caller.
    this.ready.catch(() => {
      this.#reachable(false);
      this.#retry(exponentialBackoff(200, 2000));
    });
  }

  entries(): ReadonlyMap<string, string> {
    return this.#entries;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const watcher = this.#watcher;
    this.#watcher = undefined;
    await watcher?.cancel().catch(() => undefined);
  }

  async #resync(): Promise<void> {
    const res = await this.#client.getAll().prefix(this.#prefix).exec();
    if (this.#closed) return;
    this.#reachable(true);
    const entries = new Map<string, string>();
    const changes: FleetChange[] = [];
    for (const kv of res.kvs) {
      const key = kv.key.toString().slice(this.#prefix.length);
      const value = kv.value.toString();
      entries.set(key, value);
      changes.push({ kind: 'put', key, value });
    }
    this.#entries = entries;
    this.#onChange({ initial: true, changes });
    const watcher = await this.#client
      .watch()
      .prefix(this.#prefix)
      .startRevision(String(Number(res.header.revision) + 1))
      .create();
    if (this.#closed) {
      await watcher.cancel();
      return;
    }
    this.#watcher = watcher;
    watcher.on('data', (r: IWatchResponse) => this.#apply(r));
    watcher.on('connected', () => this.#reachable(true));
    watcher.on('error', () => this.#failed());
  }

  #apply(res: IWatchResponse): void {
    if (res.events.length === 0 || this.#closed) return;
    const changes: FleetChange[] = [];
    for (const ev of res.events) {
      const key = ev.kv.key.toString().slice(this.#prefix.length);
      if (ev.type === 'Delete') {
        this.#entries.delete(key);
        changes.push({ kind: 'delete', key });
      } else {
        const value = ev.kv.value.toString();
        this.#entries.set(key, value);
        changes.push({ kind: 'put', key, value });
      }
    }
    this.#onChange({ initial: false, changes });
  }

  /** The watch cannot resume: read everything again, with backoff. */
  #failed(): void {
    const old = this.#watcher;
    this.#watcher = undefined;
    void old?.cancel().catch(() => undefined);
    this.#retry(exponentialBackoff(200, 2000));
  }

  #retry(backoff: Backoff): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#resync().catch(() => {
        this.#reachable(false);
        this.#retry(backoff.next());
      });
    }, backoff.duration);
  }
}
