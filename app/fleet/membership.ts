/**
 * This router's membership key `<prefix>members/<id>`, bound to a lease of `leaseTtl`:
 *
 * 1. `register()`: grant the lease, then create the key only if it does not exist (one etcd
 *    transaction on create revision 0). Taken: the holder is watched for up to the lease TTL;
 *    a live router rewrites its key every `leaseTtl / 3`, so a rewrite means the id is in use
 *    and the start is refused (`FleetError`); a key that disappears was a dead router's, whose
 *    lease ran out, and the create is tried again.
 * 2. Every `leaseTtl / 3` (`tick`): one keepalive of the lease and a rewrite of the key with a
 *    new `seenAt`. Success or failure of these calls is what the fleet's degraded state follows.
 *    A lease etcd says is gone (etcd was away longer than the TTL) is granted again and the key
 *    recreated, with every member-bound key put through the fleet (`reput`).
 * 3. `rewrite()` after a reload: the key with the new config hash and listeners.
 * 4. `close()`: revoke the lease, so the key (and every member-bound key) disappears at once.
 */
import type { Etcd3, Lease } from 'etcd3';
import { EtcdLeaseInvalidError } from 'etcd3';
import type { Member } from './contract.ts';
import { FleetError, FleetIdInUseError, firstLine } from './errors.ts';
import type { Reachability } from './prefix-watch.ts';

/** What the key says besides the id and times (read again at each write). */
export interface MemberFacts {
  readonly version: string;
  readonly configHash: string;
  readonly listeners: readonly string[];
}

/** How the membership reaches etcd and reports. */
export interface MembershipOptions {
  readonly client: Etcd3;
  /** The full key, `<prefix>members/<id>`. */
  readonly key: string;
  readonly id: string;
  readonly leaseTtl: number;
  /** The deadline of one call (`fleet.etcd.dialTimeout`). */
  readonly timeout: number;
  readonly facts: () => MemberFacts;
  readonly reachable: Reachability;
  /** After a new lease holds the key again: put the member-bound keys again. */
  readonly reput: (lease: Lease) => Promise<void>;
  /** An id found in use by a live router after start (logged by the fleet). */
  readonly conflict: (message: string) => void;
}

/** Rejects with `what` after `ms` unless `p` settles first. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FleetError(`${what}: no answer within ${ms}ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** One router's membership (see the file header). */
export class Membership {
  readonly #o: MembershipOptions;
  readonly #startedAt = new Date().toISOString();
  #lease: Lease | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Ticks run one at a time (the loop's and a reload's rewrite). */
  #ticking: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: MembershipOptions) {
    this.#o = options;
  }

  /** The lease the key is bound to, while registered. */
  get lease(): Lease | undefined {
    return this.#lease;
  }

  /** The key's value now. */
  value(): Member {
    const facts = this.#o.facts();
    return {
      id: this.#o.id,
      version: facts.version,
      configHash: facts.configHash,
      listeners: [...facts.listeners],
      startedAt: this.#startedAt,
      seenAt: new Date().toISOString(),
    };
  }

  /** Registers (step 1); throws `FleetError` when the id is in use or etcd cannot be reached. */
  async register(): Promise<void> {
    const { client, key, leaseTtl, timeout } = this.#o;
    const lease = client.lease(leaseTtl / 1000, { autoKeepAlive: false });
    lease.on('lost', () => undefined);
    try {
      const id = await within(lease.grant(), timeout, 'fleet.etcd: lease grant');
      const until = Date.now() + leaseTtl + 1000;
      let seen: string | undefined;
      for (;;) {
        const created = await client
          .if(key, 'Create', '==', 0)
          .then(client.put(key).value(JSON.stringify(this.value())).lease(id))
          .commit();
        if (created.succeeded) break;
        const held = await client.get(key).exec();
        const revision = held.kvs[0]?.mod_revision;
        if (seen !== undefined && revision !== undefined && revision !== seen) {
          throw new FleetIdInUseError(
            `fleet.id: ${this.#o.id} is in use by another live router (its key ${key} is being refreshed)`,
          );
        }
        seen ??= revision;
        if (Date.now() > until)
          throw new FleetIdInUseError(`fleet.id: ${this.#o.id} is in use (key ${key} did not expire)`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } catch (e) {
      await lease.revoke().catch(() => undefined);
      throw e instanceof FleetError ? e : new FleetError(`fleet.etcd: ${firstLine(e)}`, { cause: e });
    }
    this.#lease = lease;
    this.#o.reachable(true);
  }

  /** Starts the keepalive and rewrite loop (step 2). */
  start(): void {
    this.#schedule();
  }

  /** Rewrites the key now (step 3); failures only mark the fleet degraded. */
  rewrite(): Promise<void> {
    return this.#run();
  }

  /** Stops the loop and revokes the lease (step 4). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#ticking;
    const lease = this.#lease;
    this.#lease = undefined;
    await lease?.revoke().catch(() => undefined);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#run().finally(() => this.#schedule()), this.#o.leaseTtl / 3);
  }

  #run(): Promise<void> {
    const next = this.#ticking.then(() => this.#tick());
    this.#ticking = next;
    return next;
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    const { client, key, timeout } = this.#o;
    try {
      if (this.#lease === undefined) {
        await this.register();
        if (this.#lease !== undefined) await this.#o.reput(this.#lease);
        return;
      }
      const lease = this.#lease;
      try {
        await within(lease.keepaliveOnce(), timeout, 'fleet.etcd: lease keepalive');
      } catch (e) {
        if (!(e instanceof EtcdLeaseInvalidError)) throw e;
        // etcd was away longer than the TTL: the key is gone; take a new lease and the key again.
        this.#lease = undefined;
        lease.release();
        return await this.#tick();
      }
      await client
        .put(key)
        .value(JSON.stringify(this.value()))
        .lease(await lease.grant())
        .exec();
      this.#o.reachable(true);
    } catch (e) {
      if (e instanceof FleetIdInUseError) {
        this.#o.reachable(true);
        this.#o.conflict(e.message);
      } else this.#o.reachable(false);
    }
  }
}
