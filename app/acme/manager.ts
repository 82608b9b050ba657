/**
 * The ACME manager: one per router, on the main thread (app/README.md). For every `tls:
 * terminate` listener with an `acme:` section it keeps one certificate per name:
 *
 *   configure(engine) ─► wanted (listener, name) pairs: select.ts (`names:`, else the routing
 *        │  table's hosts under `domains:`, at most `maxNames`, held names before new ones)
 *        │  new pair ─► stored certificate? ─► publish it, schedule renewal
 *        │                      └─ none ───► pending
 *        ▼
 *   pending ─► one order at a time, by priority (configured, held, new), within the account's
 *        │     `maxOrdersPerHour` (else it waits, logged)
 *        ▼
 *   probe storage ─ not writable ─► no CA call; probe again after 1 s · 2^n (at most 5 min)
 *        ▼
 *   order ─► publish (served) ─► store (0600) ─ failed ─► kept in memory, stored again after
 *        │                                                1 s · 2^n (at most 5 min), no new order
 *        └─ failed ─► old certificate keeps serving, retry with backoff 30 s · 2^n (at most 6 h)
 *   timer at notAfter − renewBefore ─► pending again
 *
 * Publishing goes through the sink (app/start.ts): the runtime's IssuedCertificates and, with
 * the worker panel, every worker thread, acknowledged before the CA is asked to validate. A
 * renewal swaps the entry in place: no reload, open connections keep their handshake.
 *
 * With `fleet:` (fleet-acme.ts) the storage is etcd for every section, an order runs under the
 * fleet's lock for its name (another router holding it: asked again after one lease TTL), and
 * a certificate any router stores reaches this one by watch (`#adopt`): one order per name
 * across the fleet, renewed by whoever takes the lock (docs/acme.md "Fleets").
 */
import { X509Certificate } from 'node:crypto';
import { resolve } from 'node:path';
import type * as acme from 'acme-client';
import { channels } from '../../src/base/diagnostics.ts';
import type { Logger } from '../../src/base/log.ts';
import type { RoutingTableSource } from '../../src/contracts/types.ts';
import type { Engine } from '../../src/panel/contract.ts';
import { createClient } from './client.ts';
import type { FleetAcme, PlaceResult } from './fleet-acme.ts';
import { backoff, StorageKeeper } from './keeper.ts';
import { routingTableHosts } from './names.ts';
import { type IssuedSink, orderCertificate } from './order.ts';
import { OrderQueue } from './queue.ts';
import { chooseNames, PRIORITY, type SkippedName, skippedLine } from './select.ts';
import type { AcmeNameStatus, AcmeSection, NameState, Section } from './state.ts';
import { AcmeStorage } from './storage.ts';
import type { StoredCertificate } from './store.ts';

export type { AcmeNameStatus, AcmeSection } from './state.ts';

/** A renewed certificate is not renewed again within this (a `renewBefore` longer than the lifetime). */
export const MIN_RENEW_INTERVAL_MS = 10 * 60_000;
const RETRY_MIN_MS = 30_000;
const RETRY_MAX_MS = 6 * 3_600_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Obtains, stores, serves and renews the certificates of every `acme:` section. */
export class AcmeManager {
  readonly #sink: IssuedSink;
  readonly #logger: Logger;
  readonly #sections = new Map<string, Section>();
  readonly #names = new Map<string, NameState>();
  readonly #queue: OrderQueue<NameState>;
  readonly #keeper: StorageKeeper;
  readonly #fleet: FleetAcme | undefined;
  #closed = false;
  /** Issuance results (metrics). */
  readonly results = { ok: 0, failed: 0 };

  /** `fleet`: ACME across the fleet (etcd storage, order locks, watches), started here. */
  constructor(sink: IssuedSink, logger: Logger, fleet?: FleetAcme) {
    this.#sink = sink;
    this.#logger = logger;
    this.#keeper = new StorageKeeper(logger);
    this.#queue = new OrderQueue((s) => this.#order(s), AcmeManager.#rank, logger);
    this.#fleet = fleet;
    fleet?.start({
      certificate: (stored) => this.#adopt(stored),
      listenersFor: (name) => [...this.#names.values()].filter((s) => s.name === name).map((s) => s.section.listener),
      retryAfter: (failures) => backoff(RETRY_MIN_MS, RETRY_MAX_MS, failures),
    });
  }

  /** Follows the engine's listeners and routing table: starts new names, drops removed ones. */
  configure(engine: Engine): void {
    if (this.#closed) return;
    const { loaded } = engine;
    const wanted = new Set<string>();
    const begins: Promise<NameState | undefined>[] = [];
    for (const l of loaded.config.listeners) {
      if (l.tls !== 'terminate' || l.acme === undefined) continue;
      const spec = l.acme as AcmeSection;
      const key = JSON.stringify([l.name, spec]);
      let section = this.#sections.get(l.name);
      if (section === undefined || section.key !== key) {
        const dir = resolve(loaded.dir, spec.storage);
        section = {
          key,
          listener: l.name,
          spec,
          storage: this.#fleet?.storage ?? new AcmeStorage(dir),
          account: JSON.stringify([spec.directory, this.#fleet?.storage.where ?? dir]),
          caPath: spec.ca === undefined ? undefined : resolve(loaded.dir, spec.ca),
          client: undefined,
          skipped: section?.skipped ?? '',
        };
        this.#sections.set(l.name, section);
      }
      const book = engine.book as Partial<RoutingTableSource>;
      const { names, skipped } = chooseNames({
        configured: spec.names,
        book: spec.names === undefined ? routingTableHosts(book.routingTable?.()) : [],
        held: spec.names === undefined ? this.#held(section) : new Set(),
        domains: spec.domains,
        maxNames: spec.maxNames,
      });
      this.#logSkipped(section, skipped);
      for (const { name, priority } of names) {
        const id = `${l.name}\0${name}`;
        wanted.add(id);
        const known = this.#names.get(id);
        if (known !== undefined && known.section === section) continue;
        // Same name under a changed section: the current certificate serves until the new state replaces it.
        if (known !== undefined) this.#drop(id, known, false);
        const state: NameState = {
          section,
          name,
          priority,
          notAfter: undefined,
          lastIssued: undefined,
          renewAt: undefined,
          timer: undefined,
          ordering: false,
          failures: 0,
          lastError: undefined,
          removed: false,
          // A certificate the changed section's state published still serves, so it is still ours to withdraw.
          published: known?.published ?? false,
        };
        this.#names.set(id, state);
        begins.push(this.#begin(state));
      }
    }
    // Orders start in the chosen order (configured, held, then the book's sorted names), not in
    // the order the storage reads happen to finish: with a tight maxOrdersPerHour the first
    // name must be the first of the list every time.
    if (begins.length > 0)
      void Promise.all(begins).then((toOrder) => {
        for (const s of toOrder) if (s !== undefined) this.#enqueue(s);
      });
    for (const [id, state] of this.#names) if (!wanted.has(id)) this.#drop(id, state, true);
    for (const [name, s] of this.#sections)
      if (![...this.#names.values()].some((n) => n.section === s)) this.#sections.delete(name);
    const accounts = new Set([...this.#sections.values()].map((s) => s.account));
    this.#queue.keepAccounts(accounts);
  }

  /** Every name's state (admin `GET /certificates`). */
  status(): AcmeNameStatus[] {
    return [...this.#names.values()].map((s) => ({
      listener: s.section.listener,
      name: s.name,
      state: s.ordering ? 'ordering' : s.failures > 0 ? 'failed' : s.notAfter !== undefined ? 'valid' : 'waiting',
      notAfter: s.notAfter === undefined ? undefined : new Date(s.notAfter).toISOString(),
      renewAt: s.renewAt === undefined ? undefined : new Date(s.renewAt).toISOString(),
      failures: s.failures,
      lastError: s.lastError,
      stored: this.#keeper.stored(s.section.storage, s.name),
    }));
  }

  /** Stops every timer; an order in flight finishes but is not followed up. */
  close(): void {
    this.#closed = true;
    this.#queue.close();
    for (const [id, s] of this.#names) this.#drop(id, s, false);
    this.#keeper.close();
    void this.#fleet?.close();
  }

  /** Names a section holds a certificate for: served now, or in its storage (renewals rank first). */
  #held(section: Section): Set<string> {
    const held = new Set<string>();
    for (const s of this.#names.values()) if (s.section.listener === section.listener && s.published) held.add(s.name);
    for (const name of section.storage.heldNames()) held.add(name);
    return held;
  }

  #logSkipped(section: Section, skipped: SkippedName[]): void {
    const key = JSON.stringify(skipped);
    if (key === section.skipped) return;
    section.skipped = key;
    if (skipped.length > 0) this.#logger.warn(...skippedLine(section.listener, section.spec, skipped));
  }

  /** Stops following a name; `withdraw` also stops serving its certificate on every thread. */
  #drop(id: string, s: NameState, withdraw: boolean): void {
    s.removed = true;
    if (s.timer !== undefined) clearTimeout(s.timer);
    this.#names.delete(id);
    this.#queue.delete(s);
    if (!withdraw || !s.published) return;
    const { listener } = s.section;
    this.#sink({ kind: 'certificate-withdrawn', listener, name: s.name }).catch((e: unknown) =>
      this.#logger.error({ listener, name: s.name, err: (e as Error).message }, 'acme: withdrawing a certificate'),
    );
    this.#logger.info({ listener, name: s.name }, 'acme: name no longer configured; its certificate is withdrawn');
  }

  /** A new name: serve the stored certificate if there is one; else the name, to be ordered. */
  async #begin(s: NameState): Promise<NameState | undefined> {
    try {
      await s.section.storage.open();
      const stored = await s.section.storage.load(s.name);
      if (s.removed) return undefined;
      if (stored !== undefined && stored.notAfter > Date.now()) {
        await this.#publish(s, stored.cert, stored.key);
        this.#logger.info(
          { listener: s.section.listener, name: s.name, notAfter: new Date(stored.notAfter).toISOString() },
          'acme: certificate loaded from storage',
        );
        this.#schedule(s);
        return undefined;
      }
    } catch {
      // Storage that cannot be opened is reported by the probe before any order (#order).
    }
    return s;
  }

  async #publish(s: NameState, cert: string, key: string): Promise<void> {
    if (s.removed) return;
    // Set first: a drop while the sink is still forwarding sends its withdrawal after this update.
    s.published = true;
    await this.#sink({ kind: 'certificate', listener: s.section.listener, name: s.name, cert, key });
    s.notAfter = Date.parse(new X509Certificate(cert).validTo);
  }

  #schedule(s: NameState): void {
    if (s.removed || s.notAfter === undefined) return;
    let at = Math.max(s.notAfter - s.section.spec.renewBefore, Date.now());
    if (s.lastIssued !== undefined) at = Math.max(at, s.lastIssued + MIN_RENEW_INTERVAL_MS);
    this.#at(s, at);
  }

  #at(s: NameState, at: number): void {
    if (s.timer !== undefined) clearTimeout(s.timer);
    s.renewAt = at;
    const wait = at - Date.now();
    s.timer = setTimeout(
      () => {
        s.timer = undefined;
        if (wait > MAX_TIMER_MS) this.#at(s, at);
        else this.#enqueue(s);
      },
      Math.min(Math.max(0, wait), MAX_TIMER_MS),
    );
    s.timer.unref();
  }

  #enqueue(s: NameState): void {
    if (s.removed || this.#closed) return;
    this.#queue.add(s);
  }

  /** Configured names first, then names with a certificate (renewals), then new names from the book. */
  static #rank(s: NameState): number {
    return s.published ? Math.min(s.priority, PRIORITY.held) : s.priority;
  }

  /** False (and the name probed again later) when the section's storage cannot be written. */
  async #storageWritable(s: NameState): Promise<boolean> {
    const { retryInMs, error } = await this.#keeper.probe(s.section.storage, s.section.listener);
    if (retryInMs === 0) return true;
    s.lastError = error;
    if (!s.removed && !this.#closed) this.#at(s, Date.now() + retryInMs);
    return false;
  }

  async #order(s: NameState): Promise<void> {
    if (s.removed || this.#closed) return;
    if (this.#fleet === undefined) await this.#place(s);
    else await this.#fleetOrder(s, this.#fleet);
  }

  /** An order under the fleet's lock for the name (fleet-acme.ts), or what another router stored. */
  async #fleetOrder(s: NameState, fleet: FleetAcme): Promise<void> {
    const log = { listener: s.section.listener, name: s.name };
    let outcome: Awaited<ReturnType<FleetAcme['underLock']>>;
    try {
      outcome = await fleet.underLock(
        s.name,
        (c) => this.#fresh(s, c),
        () => this.#place(s),
      );
    } catch (e) {
      // A lock or a read of etcd that failed (or a key that does not open): no order on a doubt.
      s.lastError = (e as Error).message;
      this.#logger.error({ ...log, err: s.lastError, retryInMs: fleet.lockTtl }, 'acme: fleet storage; no order now');
      if (!s.removed && !this.#closed) this.#at(s, Date.now() + fleet.lockTtl);
      return;
    }
    if (outcome.kind === 'stored') this.#adopt(outcome.stored);
    else if (outcome.kind === 'backoff') {
      s.lastError = `the fleet's last order failed: ${outcome.error}; next attempt at ${new Date(outcome.until).toISOString()}`;
      if (!s.removed && !this.#closed) this.#at(s, outcome.until);
    } else if (outcome.kind === 'busy' || outcome.kind === 'degraded') {
      s.lastError =
        outcome.kind === 'busy'
          ? `another router holds the order lock for ${s.name}`
          : 'etcd unreachable: no new order until it answers';
      if (outcome.kind === 'busy')
        this.#logger.info(log, 'acme: another router is ordering this name; waiting for its certificate');
      if (!s.removed && !this.#closed) this.#at(s, Date.now() + fleet.lockTtl);
    }
  }

  /** Whether a stored certificate serves `s` as well as an order would (not due for renewal). */
  #fresh(s: NameState, c: StoredCertificate): boolean {
    return (
      c.notAfter - s.section.spec.renewBefore > Date.now() && (s.notAfter === undefined || c.notAfter > s.notAfter)
    );
  }

  /**
   * A certificate from the fleet's storage (the watch, or read under the lock): served on every
   * listener that wants the name and holds an older one (or none), its renewal scheduled, any
   * wait or retry for it ended.
   */
  #adopt(stored: StoredCertificate): void {
    for (const s of this.#names.values()) {
      if (s.name !== stored.name || s.removed) continue;
      if (s.notAfter !== undefined && stored.notAfter <= s.notAfter) continue;
      if (stored.notAfter <= Date.now()) continue;
      this.#queue.delete(s);
      s.failures = 0;
      s.lastError = undefined;
      s.notAfter = stored.notAfter;
      this.#publish(s, stored.cert, stored.key).then(
        () => {
          this.#logger.info(
            { listener: s.section.listener, name: s.name, notAfter: new Date(stored.notAfter).toISOString() },
            'acme: certificate from the fleet',
          );
          this.#schedule(s);
        },
        (e: unknown) =>
          this.#logger.error(
            { listener: s.section.listener, name: s.name, err: (e as Error).message },
            'acme: publishing a fleet certificate',
          ),
      );
    }
  }

  /** Probes the storage, orders, stores and serves (the order itself, fleet or not). */
  async #place(s: NameState): Promise<PlaceResult> {
    const { section } = s;
    const log = { listener: section.listener, name: s.name, challenge: section.spec.challenge };
    if (!(await this.#storageWritable(s))) return { kind: 'skipped' };
    if (s.removed || this.#closed) return { kind: 'skipped' };
    s.ordering = true;
    try {
      const client = await this.#client(section);
      this.#queue.spend(s);
      this.#logger.info(log, s.notAfter === undefined ? 'acme: ordering a certificate' : 'acme: renewing');
      const { cert, key } = await orderCertificate({
        client,
        listener: section.listener,
        name: s.name,
        challenge: section.spec.challenge,
        email: section.spec.email,
        sink: this.#fleet?.orderSink() ?? this.#sink,
      });
      // Kept (and served) even when storage refuses it now: StorageKeeper saves it later.
      await this.#keeper.store(section.storage, section.listener, s.name, cert, key);
      if (s.removed) return { kind: 'ok' };
      await this.#publish(s, cert, key);
      s.lastIssued = Date.now();
      s.failures = 0;
      s.lastError = undefined;
      this.results.ok++;
      if (channels.acmeIssued.hasSubscribers)
        channels.acmeIssued.publish({ listener: section.listener, name: s.name, result: 'ok' });
      this.#logger.info({ ...log, notAfter: new Date(s.notAfter!).toISOString() }, 'acme: certificate obtained');
      this.#schedule(s);
      return { kind: 'ok' };
    } catch (e) {
      s.failures++;
      s.lastError = (e as Error).message;
      this.results.failed++;
      if (channels.acmeIssued.hasSubscribers)
        channels.acmeIssued.publish({ listener: section.listener, name: s.name, result: 'failed', error: s.lastError });
      const retry = backoff(RETRY_MIN_MS, RETRY_MAX_MS, s.failures);
      this.#logger.error(
        { ...log, err: s.lastError, failures: s.failures, retryInMs: retry },
        s.notAfter === undefined
          ? 'acme: order failed; the name has no certificate yet (default certificate or handshake failure)'
          : 'acme: renewal failed; the current certificate keeps serving',
      );
      if (!s.removed && !this.#closed) this.#at(s, Date.now() + retry);
      return { kind: 'failed', error: s.lastError };
    } finally {
      s.ordering = false;
    }
  }

  #client(section: Section): Promise<acme.Client> {
    section.client ??= createClient(
      { directory: section.spec.directory, email: section.spec.email, caPath: section.caPath },
      section.storage,
    );
    section.client.catch(() => {
      section.client = undefined;
    });
    return section.client;
  }
}
