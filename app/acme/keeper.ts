/**
 * What the ACME manager does about its storage (issue 39 item 4): a CA is never asked for a
 * certificate the router could not keep, and one it paid for is never thrown away.
 *
 *   before an order: probe(storage) ─ fails ─► no order; the caller waits 1 s · 2^n (≤ 5 min)
 *        │                                      (one log line when a directory breaks, one when it heals)
 *   after issuance:  store(storage, name, cert, key) ─ fails ─► kept here (served by the caller
 *                    from memory), saved again after 1 s · 2^n (≤ 5 min), until it is stored or
 *                    a newer certificate for the name replaces it
 *
 * Saves of one name run one after the other, so an old certificate never lands over a newer one.
 */
import { channels } from '../../src/base/diagnostics.ts';
import type { Logger } from '../../src/base/log.ts';
import type { AcmeStore } from './store.ts';

/** Storage probes and saves: local, cheap, and worth retrying soon after an operator fixes the disk. */
export const STORAGE_RETRY_MIN_MS = 1_000;
export const STORAGE_RETRY_MAX_MS = 5 * 60_000;

/** `min · 2^(n−1)`, at most `max`. */
export function backoff(min: number, max: number, n: number): number {
  return Math.min(min * 2 ** Math.max(0, n - 1), max);
}

interface Unsaved {
  readonly storage: AcmeStore;
  readonly listener: string;
  readonly name: string;
  readonly cert: string;
  readonly key: string;
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

/** Storage health per directory and the certificates waiting to be stored. */
export class StorageKeeper {
  readonly #logger: Logger;
  /** Per storage directory: consecutive failed probes (absent = writable, as far as is known). */
  readonly #broken = new Map<string, number>();
  /** Per storage directory and name: the certificate waiting to be stored. */
  readonly #unsaved = new Map<string, Unsaved>();
  /** Per storage directory and name: the saves, one at a time. */
  readonly #saving = new Map<string, Promise<void>>();
  #closed = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** 0 when `storage` takes files; else how long to wait before probing it again. */
  async probe(storage: AcmeStore, listener: string): Promise<{ retryInMs: number; error?: string }> {
    try {
      await storage.probe();
    } catch (e) {
      const failures = (this.#broken.get(storage.where) ?? 0) + 1;
      this.#broken.set(storage.where, failures);
      const error = (e as Error).message;
      if (channels.acmeStorage.hasSubscribers) channels.acmeStorage.publish({ listener, op: 'probe', error });
      if (failures === 1)
        this.#logger.error(
          { listener, storage: storage.where, err: error },
          'acme: storage is not writable; no order is placed until it is (probed again with backoff)',
        );
      return { retryInMs: backoff(STORAGE_RETRY_MIN_MS, STORAGE_RETRY_MAX_MS, failures), error };
    }
    if (this.#broken.delete(storage.where))
      this.#logger.info({ listener, storage: storage.where }, 'acme: storage is writable again; orders resume');
    return { retryInMs: 0 };
  }

  /** True when the last certificate issued for `name` is in `storage`. */
  stored(storage: AcmeStore, name: string): boolean {
    return !this.#unsaved.has(`${storage.where}\0${name}`);
  }

  /** Stores a certificate; on failure keeps it and saves it again later. Resolves after the first attempt. */
  store(storage: AcmeStore, listener: string, name: string, cert: string, key: string): Promise<void> {
    const id = `${storage.where}\0${name}`;
    const prev = this.#unsaved.get(id);
    if (prev !== undefined && prev.cert !== cert) clearTimeout(prev.timer);
    const entry: Unsaved =
      prev?.cert === cert ? prev : { storage, listener, name, cert, key, failures: 0, timer: undefined };
    this.#unsaved.set(id, entry);
    const saving = (this.#saving.get(id) ?? Promise.resolve()).then(() => this.#save(id, entry));
    this.#saving.set(id, saving);
    void saving.then(() => {
      if (this.#saving.get(id) === saving) this.#saving.delete(id);
    });
    return saving;
  }

  /** Stops the retries; logs every certificate that was never stored. */
  close(): void {
    this.#closed = true;
    for (const u of this.#unsaved.values()) {
      clearTimeout(u.timer);
      this.#logger.error(
        { listener: u.listener, name: u.name, storage: u.storage.where },
        'acme: closing with a certificate never stored; the next start orders it again',
      );
    }
    this.#unsaved.clear();
  }

  async #save(id: string, entry: Unsaved): Promise<void> {
    if (this.#unsaved.get(id) !== entry) return;
    const log = { listener: entry.listener, name: entry.name };
    try {
      await entry.storage.save(entry.name, entry.cert, entry.key);
      if (this.#unsaved.get(id) === entry) this.#unsaved.delete(id);
      if (entry.failures > 0) this.#logger.info(log, 'acme: certificate stored at last');
    } catch (e) {
      if (this.#closed || this.#unsaved.get(id) !== entry) return;
      const err = (e as Error).message;
      entry.failures++;
      const retry = backoff(STORAGE_RETRY_MIN_MS, STORAGE_RETRY_MAX_MS, entry.failures);
      entry.timer = setTimeout(
        () => void this.store(entry.storage, entry.listener, entry.name, entry.cert, entry.key),
        retry,
      );
      entry.timer.unref();
      if (channels.acmeStorage.hasSubscribers) channels.acmeStorage.publish({ ...log, op: 'save', error: err });
      this.#logger.error(
        { ...log, err, failures: entry.failures, retryInMs: retry },
        'acme: certificate obtained but not stored; it is served from memory and stored again later (no new order)',
      );
    }
  }
}
