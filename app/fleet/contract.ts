/**
 * The fleet, as the parts built on it see it (types only): who the live routers are, whether
 * etcd can be reached, and the etcd primitives (keys, watches, locks, lease-bound keys) under
 * the fleet's prefix. `fleet.ts` implements it on etcd3; nothing else in app/ imports etcd3 for
 * the fleet (README.md).
 *
 * Keys given to these methods are relative to `fleet.etcd.prefix`: `put('acme/certs/a.test', …)`
 * writes `/switchboard/fleet/acme/certs/a.test` with the default prefix. The `members/` subtree
 * belongs to membership: write nothing there.
 */

/** One live router, as its membership key `<prefix>members/<id>` says. */
export interface Member {
  readonly id: string;
  /** The package version the router runs (`package.json`). */
  readonly version: string;
  /** The hash of the engine version in use (changes on every reload with a new config). */
  readonly configHash: string;
  /** The listeners' addresses, `host:port` as bound. */
  readonly listeners: readonly string[];
  /** ISO 8601: when the router started. */
  readonly startedAt: string;
  /** ISO 8601: when the router last rewrote its key (every `leaseTtl / 3`). */
  readonly seenAt: string;
}

/** One change under a watched prefix; `key` is relative to the watched prefix. */
export type FleetChange =
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'delete'; readonly key: string };

/** A running watch: the keys it holds now, and how to stop it. */
export interface FleetWatch {
  /** Every key under the watched prefix (relative to it) and its value, at one etcd revision. */
  entries(): ReadonlyMap<string, string>;
  close(): Promise<void>;
}

/** Whether a change of a watch is its first load or an update from etcd. */
export interface FleetChangeBatch {
  /** True for the first call (every key there is, as puts) and after a reconnect that reread all. */
  readonly initial: boolean;
  readonly changes: readonly FleetChange[];
}

/** A held lease-bound lock; released by `release()`, or by etcd when the holder's lease dies. */
export interface FleetLock {
  readonly name: string;
  /** True once the lease behind the lock is gone (keepalive failed past its TTL): another router may hold it. */
  readonly lost: boolean;
  /** Called once if the lock is lost; returns the unsubscribe. */
  onLost(listener: () => void): () => void;
  release(): Promise<void>;
}

/** How a lock is waited for. */
export interface LockOptions {
  /** Give up waiting (the promise rejects with the signal's reason). Without it, waits until acquired. */
  readonly signal?: AbortSignal;
}

/** How a key is put. */
export interface PutOptions {
  /**
   * `member`: bound to this router's membership lease, so the key disappears when the router
   * stops or dies (after `leaseTtl`). Without it, the key stays until deleted.
   */
  readonly lease?: 'member';
}

/** Why the fleet is degraded (the text /readyz and the log give). */
export type DegradedReason = 'etcd unreachable';

/**
 * The fleet of one router (`fleet:` configured). Reads of members and degraded are local and
 * synchronous (kept by a watch and the lease keepalive); the etcd primitives reject with a
 * `SwitchboardError` `SWB_ERR_FLEET` when etcd cannot be reached within the dial timeout.
 */
export interface Fleet {
  /** This router's id (`fleet.id`, or hostname + first listener address). */
  readonly id: string;
  /** The live members as the last watch event left them (this router included once registered). */
  members(): readonly Member[];
  /** How many members are live (at least 1: this router counts itself even when etcd is down). */
  liveCount(): number;
  /** True while etcd cannot be reached; serving goes on from the last state. */
  readonly degraded: boolean;
  /** The reason while degraded, undefined otherwise. */
  readonly degradedReason: DegradedReason | undefined;
  /** Called on every change of `degraded` (not on repeats); returns the unsubscribe. */
  onDegraded(listener: (degraded: boolean) => void): () => void;
  /** Called after each change of the member list; returns the unsubscribe. */
  onMembers(listener: (members: readonly Member[]) => void): () => void;

  /** The value of `key`, or undefined when it does not exist. */
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string, options?: PutOptions): Promise<void>;
  /** Puts only if `key` does not exist; false when it does (etcd transaction on create revision 0). */
  create(key: string, value: string, options?: PutOptions): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * Loads every key under `prefix` and calls `onChange` with them (`initial: true`) before the
   * promise resolves, then with each change etcd reports, in order. Across an etcd outage the
   * watch resumes from the last revision it saw, or rereads everything (`initial: true`).
   */
  watchPrefix(prefix: string, onChange: (batch: FleetChangeBatch) => void): Promise<FleetWatch>;
  /** Waits for and takes the lock `name`, bound to a lease of `ttl` ms kept alive while held. */
  lock(name: string, ttl: number, options?: LockOptions): Promise<FleetLock>;
  /** Takes the lock `name` if free; undefined when another holder has it. */
  tryLock(name: string, ttl: number): Promise<FleetLock | undefined>;
}
