/**
 * The `Fleet` (contract.ts) on etcd3: membership, the live member list, the degraded state and
 * the etcd primitives under `fleet.etcd.prefix`.
 *
 * 1. `EtcdFleet.start`: connect (client.ts), watch `<prefix>members/` (prefix-watch.ts) and
 *    register this router's key (membership.ts). An id in use by a live router refuses the
 *    start. etcd unreachable does not: the router serves, the fleet is degraded, and the
 *    membership loop registers as soon as etcd answers.
 * 2. Degraded follows what etcd answers: a failed keepalive, key write or call turns it on, a
 *    success (or a watch reconnecting) turns it off. Each change is logged once (warn when it
 *    turns on, info when it clears) and told to `onDegraded` listeners; `degraded` is a plain
 *    field read, so the metrics and /readyz cost nothing.
 * 3. Keys put with `lease: 'member'` are remembered and put again whenever membership takes a
 *    new lease (after etcd was away longer than the lease TTL), so they live exactly as long as
 *    the member does.
 * 4. `close()`: stop the watches, revoke the membership lease (the key disappears at once),
 *    close the client.
 */
import type { Etcd3, Lease } from 'etcd3';
import { GRPCGenericError, isRecoverableError } from 'etcd3';
import type { Logger } from '../../src/base/log.ts';
import type { FleetConfig } from '../../src/config/fleet.ts';
import { connectFleetEtcd } from './client.ts';
import type {
  DegradedReason,
  Fleet,
  FleetChangeBatch,
  FleetLock,
  FleetWatch,
  LockOptions,
  Member,
  PutOptions,
} from './contract.ts';
import { FleetError, FleetIdInUseError, firstLine } from './errors.ts';
import { lock, tryLock } from './lock.ts';
import { type MemberFacts, Membership } from './membership.ts';
import { PrefixWatch } from './prefix-watch.ts';

/** What a fleet starts from. */
export interface FleetStartOptions {
  readonly config: FleetConfig;
  /** The config file's directory (TLS paths are relative to it). */
  readonly dir: string;
  /** The member id (resolved: `fleet.id` or the default, member-id.ts). */
  readonly id: string;
  /** The member key's facts, read at each write. */
  readonly facts: () => MemberFacts;
  readonly logger: Logger;
}

/** A member's key value, or undefined when it is not one (logged, skipped). */
function parseMember(value: string): Member | undefined {
  try {
    const m = JSON.parse(value) as Partial<Member>;
    if (typeof m.id !== 'string' || typeof m.seenAt !== 'string') return undefined;
    return {
      id: m.id,
      version: String(m.version ?? ''),
      configHash: String(m.configHash ?? ''),
      listeners: Array.isArray(m.listeners) ? m.listeners.map(String) : [],
      startedAt: String(m.startedAt ?? ''),
      seenAt: m.seenAt,
    };
  } catch {
    return undefined;
  }
}

/** One router's fleet (see the file header). */
export class EtcdFleet implements Fleet {
  readonly id: string;
  readonly #client: Etcd3;
  readonly #prefix: string;
  readonly #logger: Logger;
  readonly #membership: Membership;
  readonly #membersWatch: PrefixWatch;
  readonly #watches = new Set<FleetWatch>();
  readonly #memberKeys = new Map<string, string>();
  readonly #degradedListeners = new Set<(degraded: boolean) => void>();
  readonly #membersListeners = new Set<(members: readonly Member[]) => void>();
  #members: readonly Member[] = [];
  #degraded = false;
  #conflict: string | undefined;
  #closed = false;

  /** Connects, watches the members and registers (step 1); an id in use rejects. */
  static async start(o: FleetStartOptions): Promise<EtcdFleet> {
    const client = await connectFleetEtcd(o.config.etcd, o.dir);
    const fleet = new EtcdFleet(client, o);
    try {
      await fleet.#start();
    } catch (e) {
      await fleet.close();
      throw e;
    }
    return fleet;
  }

  private constructor(client: Etcd3, o: FleetStartOptions) {
    this.id = o.id;
    this.#client = client;
    this.#prefix = o.config.etcd.prefix;
    this.#logger = o.logger;
    const reachable = (ok: boolean) => this.#reachable(ok);
    this.#membership = new Membership({
      client,
      key: `${this.#prefix}members/${o.id}`,
      id: o.id,
      leaseTtl: o.config.leaseTtl,
      timeout: o.config.etcd.dialTimeout,
      facts: o.facts,
      reachable,
      reput: (lease) => this.#reput(lease),
      conflict: (message) => {
        if (this.#conflict === message) return;
        this.#conflict = message;
        this.#logger.error({ id: o.id }, `fleet: ${message}; this router is not a member until it is free`);
      },
    });
    this.#membersWatch = new PrefixWatch(client, `${this.#prefix}members/`, () => this.#membersChanged(), reachable);
  }

  async #start(): Promise<void> {
    try {
      await this.#membership.register();
    } catch (e) {
      if (e instanceof FleetIdInUseError) throw e;
      this.#reachable(false);
    }
    this.#membership.start();
    // etcd answered: wait for the first member list. It did not: start at once (the admin
    // listener and /readyz come after this part) and let the watch load it when etcd is back.
    if (!this.#degraded) await this.#membersWatch.ready.catch(() => undefined);
  }

  get degraded(): boolean {
    return this.#degraded;
  }

  get degradedReason(): DegradedReason | undefined {
    return this.#degraded ? 'etcd unreachable' : undefined;
  }

  members(): readonly Member[] {
    return this.#members;
  }

  liveCount(): number {
    return this.#members.length + (this.#members.some((m) => m.id === this.id) ? 0 : 1);
  }

  onDegraded(listener: (degraded: boolean) => void): () => void {
    this.#degradedListeners.add(listener);
    return () => this.#degradedListeners.delete(listener);
  }

  onMembers(listener: (members: readonly Member[]) => void): () => void {
    this.#membersListeners.add(listener);
    return () => this.#membersListeners.delete(listener);
  }

  /** Rewrites the member key now (after a reload: a new config hash, maybe new listeners). */
  rewriteMember(): Promise<void> {
    return this.#membership.rewrite();
  }

  async get(key: string): Promise<string | undefined> {
    const value = await this.#call('get', key, () => this.#client.get(this.#prefix + key).string());
    return value ?? undefined;
  }

  async put(key: string, value: string, options: PutOptions = {}): Promise<void> {
    if (options.lease === 'member') this.#memberKeys.set(key, value);
    else this.#memberKeys.delete(key);
    await this.#call('put', key, async () => {
      const put = this.#client.put(this.#prefix + key).value(value);
      await (options.lease === 'member' ? put.lease(await this.#memberLease()) : put).exec();
    });
  }

  async create(key: string, value: string, options: PutOptions = {}): Promise<boolean> {
    const full = this.#prefix + key;
    const created = await this.#call('create', key, async () => {
      const put = this.#client.put(full).value(value);
      if (options.lease === 'member') put.lease(await this.#memberLease());
      const res = await this.#client.if(full, 'Create', '==', 0).then(put).commit();
      return res.succeeded;
    });
    if (created && options.lease === 'member') this.#memberKeys.set(key, value);
    return created;
  }

  async delete(key: string): Promise<void> {
    this.#memberKeys.delete(key);
    await this.#call('delete', key, () =>
      this.#client
        .delete()
        .key(this.#prefix + key)
        .exec(),
    );
  }

  async watchPrefix(prefix: string, onChange: (batch: FleetChangeBatch) => void): Promise<FleetWatch> {
    const inner = new PrefixWatch(this.#client, this.#prefix + prefix, onChange, (ok) => this.#reachable(ok));
    try {
      await inner.ready;
    } catch (e) {
      await inner.close();
      this.#failed(e);
      throw new FleetError(`fleet: watch ${prefix}: ${firstLine(e)}`, { cause: e });
    }
    const watches = this.#watches;
    const watch: FleetWatch = {
      entries: () => inner.entries(),
      close: async () => {
        watches.delete(watch);
        await inner.close();
      },
    };
    watches.add(watch);
    return watch;
  }

  lock(name: string, ttl: number, options: LockOptions = {}): Promise<FleetLock> {
    return lock(this.#client, `${this.#prefix}locks/${name}`, name, ttl, this.id, options.signal);
  }

  tryLock(name: string, ttl: number): Promise<FleetLock | undefined> {
    return tryLock(this.#client, `${this.#prefix}locks/${name}`, name, ttl, this.id);
  }

  /** Step 4. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of [...this.#watches]) await w.close();
    await this.#membersWatch.close();
    await this.#membership.close();
    this.#client.close();
    this.#degradedListeners.clear();
    this.#membersListeners.clear();
  }

  async #memberLease(): Promise<string> {
    const lease = this.#membership.lease;
    if (lease === undefined) throw new FleetError('fleet: not a member yet (etcd unreachable or the id in use)');
    return lease.grant();
  }

  /** Step 3: the member-bound keys again, on the membership's new lease. */
  async #reput(lease: Lease): Promise<void> {
    const id = await lease.grant();
    for (const [key, value] of this.#memberKeys) {
      await this.#client
        .put(this.#prefix + key)
        .value(value)
        .lease(id)
        .exec();
    }
  }

  /** Runs one etcd call: success means etcd is reachable; failure is a `FleetError` naming the key. */
  async #call<T>(what: string, key: string, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      this.#reachable(true);
      return result;
    } catch (e) {
      this.#failed(e);
      if (e instanceof FleetError) throw e;
      throw new FleetError(`fleet: ${what} ${key}: ${firstLine(e)}`, { cause: e });
    }
  }

  /** A transport failure (no answer, deadline, open circuit) marks etcd unreachable; etcd's own refusals do not. */
  #failed(e: unknown): void {
    if (!(e instanceof Error)) return;
    // cockatiel's BrokenCircuitError (etcd3's per-host breaker) is not exported by etcd3: its name.
    if (e instanceof GRPCGenericError || isRecoverableError(e) || e.name === 'BrokenCircuitError')
      this.#reachable(false);
  }

  #membersChanged(): void {
    const members: Member[] = [];
    for (const [id, value] of this.#membersWatch.entries()) {
      const m = parseMember(value);
      if (m !== undefined) members.push(m);
      else
        this.#logger.warn({ key: `${this.#prefix}members/${id}` }, 'fleet: a member key that is not a member; skipped');
    }
    members.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.#members = members;
    if (members.some((m) => m.id === this.id)) this.#conflict = undefined;
    for (const l of [...this.#membersListeners]) l(members);
  }

  /** Step 2. */
  #reachable(ok: boolean): void {
    if (this.#closed || ok !== this.#degraded) return;
    this.#degraded = !ok;
    if (ok) this.#logger.info({ id: this.id }, 'fleet: etcd reachable again; degraded cleared');
    else
      this.#logger.warn(
        { id: this.id, reason: 'etcd unreachable' },
        'fleet degraded: etcd unreachable; serving from the last state',
      );
    for (const l of [...this.#degradedListeners]) l(this.#degraded);
  }
}
