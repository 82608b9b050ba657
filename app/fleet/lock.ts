/**
 * `Fleet.lock` and `tryLock` (contract.ts): a lease-bound lock key `<prefix>locks/<name>`,
 * holding the holder's member id.
 *
 * 1. `tryLock`: grant a lease of `ttl` (kept alive by etcd3 while held), then create the key
 *    bound to it only if it does not exist (one transaction on create revision 0). Taken: the
 *    lease is revoked and the answer is undefined.
 * 2. `lock`: `tryLock`, and while taken, wait for the key's deletion (a watch) or the lease's
 *    TTL (a retry in case a deletion was missed), then try again; an abort signal ends the wait.
 * 3. A holder that dies stops its keepalives; etcd deletes the key when the lease runs out, and
 *    a waiting router takes it. A holder whose keepalives fail past the TTL sees `lost`.
 * 4. `release()` revokes the lease: the key goes at once.
 */
import type { Etcd3, Lease } from 'etcd3';
import type { FleetLock } from './contract.ts';
import { FleetError, firstLine } from './errors.ts';

/** A lock this router holds. */
class HeldLock implements FleetLock {
  readonly name: string;
  readonly #lease: Lease;
  readonly #listeners = new Set<() => void>();
  #lost = false;

  constructor(name: string, lease: Lease) {
    this.name = name;
    this.#lease = lease;
    lease.on('lost', () => {
      if (this.#lost) return;
      this.#lost = true;
      for (const l of [...this.#listeners]) l();
    });
  }

  get lost(): boolean {
    return this.#lost;
  }

  onLost(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async release(): Promise<void> {
    this.#lost = true;
    this.#listeners.clear();
    await this.#lease.revoke().catch(() => undefined);
  }
}

/** Takes the lock at `key` if free (step 1); undefined when held by another. */
export async function tryLock(
  client: Etcd3,
  key: string,
  name: string,
  ttl: number,
  holder: string,
): Promise<FleetLock | undefined> {
  const lease = client.lease(Math.max(1, Math.ceil(ttl / 1000)));
  lease.on('lost', () => undefined);
  try {
    const id = await lease.grant();
    const res = await client.if(key, 'Create', '==', 0).then(client.put(key).value(holder).lease(id)).commit();
    if (res.succeeded) return new HeldLock(name, lease);
  } catch (e) {
    await lease.revoke().catch(() => undefined);
    throw new FleetError(`fleet: lock ${name}: ${firstLine(e)}`, { cause: e });
  }
  await lease.revoke().catch(() => undefined);
  return undefined;
}

/** Waits for and takes the lock at `key` (step 2). */
export async function lock(
  client: Etcd3,
  key: string,
  name: string,
  ttl: number,
  holder: string,
  signal: AbortSignal | undefined,
): Promise<FleetLock> {
  for (;;) {
    signal?.throwIfAborted();
    const watcher = await client
      .watch()
      .key(key)
      .create()
      .catch((e: unknown) => {
        throw new FleetError(`fleet: lock ${name}: ${firstLine(e)}`, { cause: e });
      });
    try {
      const held = await tryLock(client, key, name, ttl, holder);
      if (held !== undefined) return held;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, Math.max(1000, ttl));
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          resolve();
        };
        const aborted = () => {
          clearTimeout(timer);
          reject(signal?.reason);
        };
        watcher.once('delete', done);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    } finally {
      await watcher.cancel().catch(() => undefined);
    }
  }
}
