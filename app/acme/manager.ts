/**
 * The ACME manager: one per router, on the main thread (app/README.md). For every `tls:
 * terminate` listener with an `acme:` section it keeps one certificate per name:
 *
 *   configure(engine) ─► wanted (listener, name) pairs: `names:` or the routing table's hosts
 *        │  new pair ─► stored certificate? ─► publish it, schedule renewal
 *        │                      └─ none ───► order now (serialised, one order at a time)
 *        ▼
 *   timer at notAfter − renewBefore ─► order ─► store (0600) ─► publish ─► schedule again
 *                                       └─ failed ─► old certificate keeps serving, retry with
 *                                                    backoff 30 s · 2^n (at most 6 h)
 *
 * Publishing goes through the sink (app/start.ts): the runtime's IssuedCertificates and, with
 * the worker panel, every worker thread, acknowledged before the CA is asked to validate. A
 * renewal swaps the entry in place: no reload, open connections keep their handshake.
 * Routers sharing etcd do not coordinate: each orders its own certificates (docs/acme.md).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { resolve } from 'node:path';
import * as acme from 'acme-client';
import { channels } from '../../src/diagnostics.ts';
import type { Engine } from '../../src/engine.ts';
import type { Logger } from '../../src/log.ts';
import type { RoutingTableSource } from '../../src/types.ts';
import { routingTableHosts } from './names.ts';
import { type IssuedSink, orderCertificate } from './order.ts';
import { AcmeStorage } from './storage.ts';

/** A listener's parsed `acme:` section. */
export interface AcmeSection {
  readonly directory: string;
  readonly email?: string | undefined;
  readonly names?: readonly string[] | undefined;
  readonly challenge: 'tls-alpn-01' | 'http-01';
  readonly storage: string;
  readonly renewBefore: number;
  readonly ca?: string | undefined;
}

/** One name's state, as `GET /certificates` shows it. */
export interface AcmeNameStatus {
  readonly listener: string;
  readonly name: string;
  readonly state: 'valid' | 'ordering' | 'failed' | 'waiting';
  readonly notAfter: string | undefined;
  readonly renewAt: string | undefined;
  readonly failures: number;
  readonly lastError: string | undefined;
}

interface Section {
  readonly key: string;
  readonly listener: string;
  readonly spec: AcmeSection;
  readonly storage: AcmeStorage;
  client: Promise<acme.Client> | undefined;
}

interface NameState {
  readonly section: Section;
  readonly name: string;
  notAfter: number | undefined;
  lastIssued: number | undefined;
  renewAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
  ordering: boolean;
  failures: number;
  lastError: string | undefined;
  removed: boolean;
  /** A certificate was handed to the sink for this name (so dropping the name withdraws it). */
  published: boolean;
}

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
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  /** Issuance results (metrics). */
  readonly results = { ok: 0, failed: 0 };

  constructor(sink: IssuedSink, logger: Logger) {
    this.#sink = sink;
    this.#logger = logger;
  }

  /** Follows the engine's listeners and routing table: starts new names, drops removed ones. */
  configure(engine: Engine): void {
    if (this.#closed) return;
    const { loaded } = engine;
    const wanted = new Set<string>();
    const cas: Buffer[] = [];
    for (const l of loaded.config.listeners) {
      if (l.tls !== 'terminate' || l.acme === undefined) continue;
      const spec = l.acme as AcmeSection;
      const key = JSON.stringify([l.name, spec]);
      let section = this.#sections.get(l.name);
      if (section === undefined || section.key !== key) {
        section = {
          key,
          listener: l.name,
          spec,
          storage: new AcmeStorage(resolve(loaded.dir, spec.storage)),
          client: undefined,
        };
        this.#sections.set(l.name, section);
      }
      if (spec.ca !== undefined) {
        try {
          cas.push(readFileSync(resolve(loaded.dir, spec.ca)));
        } catch (e) {
          this.#logger.error({ listener: l.name, err: (e as Error).message }, 'acme: cannot read ca');
        }
      }
      const book = engine.book as Partial<RoutingTableSource>;
      const names = spec.names ?? routingTableHosts(book.routingTable?.());
      for (const name of names) {
        const id = `${l.name}\0${name}`;
        wanted.add(id);
        const known = this.#names.get(id);
        if (known !== undefined && known.section === section) continue;
        // Same name under a changed section: the current certificate serves until the new state replaces it.
        if (known !== undefined) this.#drop(id, known, false);
        const state: NameState = {
          section,
          name,
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
        void this.#begin(state);
      }
    }
    // acme-client talks through one axios instance: the CAs of every section are trusted together.
    if (cas.length > 0) acme.axios.defaults.httpsAgent = new Agent({ ca: cas.map((c) => c.toString()) });
    for (const [id, state] of this.#names) if (!wanted.has(id)) this.#drop(id, state, true);
    for (const [name, s] of this.#sections)
      if (![...this.#names.values()].some((n) => n.section === s)) this.#sections.delete(name);
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
    }));
  }

  /** Stops every timer; an order in flight finishes but is not followed up. */
  close(): void {
    this.#closed = true;
    for (const [id, s] of this.#names) this.#drop(id, s, false);
  }

  /** Stops following a name; `withdraw` also stops serving its certificate on every thread. */
  #drop(id: string, s: NameState, withdraw: boolean): void {
    s.removed = true;
    if (s.timer !== undefined) clearTimeout(s.timer);
    this.#names.delete(id);
    if (!withdraw || !s.published) return;
    const { listener } = s.section;
    this.#sink({ kind: 'certificate-withdrawn', listener, name: s.name }).catch((e: unknown) =>
      this.#logger.error({ listener, name: s.name, err: (e as Error).message }, 'acme: withdrawing a certificate'),
    );
    this.#logger.info({ listener, name: s.name }, 'acme: name no longer configured; its certificate is withdrawn');
  }

  /** A new name: serve the stored certificate if there is one, else order. */
  async #begin(s: NameState): Promise<void> {
    try {
      await s.section.storage.open();
      const stored = await s.section.storage.load(s.name);
      if (s.removed) return;
      if (stored !== undefined && stored.notAfter > Date.now()) {
        await this.#publish(s, stored.cert, stored.key);
        this.#logger.info(
          { listener: s.section.listener, name: s.name, notAfter: new Date(stored.notAfter).toISOString() },
          'acme: certificate loaded from storage',
        );
        this.#schedule(s);
        return;
      }
    } catch (e) {
      this.#logger.error({ listener: s.section.listener, name: s.name, err: (e as Error).message }, 'acme: storage');
    }
    this.#enqueue(s);
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

  /** Orders run one at a time (a CA's rate limits, and one challenge set per name at once). */
  #enqueue(s: NameState): void {
    this.#queue = this.#queue.then(() => this.#order(s));
  }

  async #order(s: NameState): Promise<void> {
    if (s.removed || this.#closed) return;
    const { section } = s;
    const log = { listener: section.listener, name: s.name, challenge: section.spec.challenge };
    s.ordering = true;
    try {
      const client = await this.#client(section);
      this.#logger.info(log, s.notAfter === undefined ? 'acme: ordering a certificate' : 'acme: renewing');
      const { cert, key } = await orderCertificate({
        client,
        listener: section.listener,
        name: s.name,
        challenge: section.spec.challenge,
        email: section.spec.email,
        sink: this.#sink,
      });
      await section.storage.save(s.name, cert, key);
      if (s.removed) return;
      await this.#publish(s, cert, key);
      s.lastIssued = Date.now();
      s.failures = 0;
      s.lastError = undefined;
      this.results.ok++;
      if (channels.acmeIssued.hasSubscribers)
        channels.acmeIssued.publish({ listener: section.listener, name: s.name, result: 'ok' });
      this.#logger.info({ ...log, notAfter: new Date(s.notAfter!).toISOString() }, 'acme: certificate obtained');
      this.#schedule(s);
    } catch (e) {
      s.failures++;
      s.lastError = (e as Error).message;
      this.results.failed++;
      if (channels.acmeIssued.hasSubscribers)
        channels.acmeIssued.publish({ listener: section.listener, name: s.name, result: 'failed', error: s.lastError });
      const retry = Math.min(RETRY_MIN_MS * 2 ** (s.failures - 1), RETRY_MAX_MS);
      this.#logger.error(
        { ...log, err: s.lastError, failures: s.failures, retryInMs: retry },
        s.notAfter === undefined
          ? 'acme: order failed; the name has no certificate yet (default certificate or handshake failure)'
          : 'acme: renewal failed; the current certificate keeps serving',
      );
      if (!s.removed && !this.#closed) this.#at(s, Date.now() + retry);
    } finally {
      s.ordering = false;
    }
  }

  #client(section: Section): Promise<acme.Client> {
    section.client ??= this.#account(section);
    section.client.catch(() => {
      section.client = undefined;
    });
    return section.client;
  }

  /** The account: its key and URL from storage, registered (and both stored) on first use. */
  async #account(section: Section): Promise<acme.Client> {
    const { storage, spec } = section;
    const accountKey = await storage.accountKey(() => acme.crypto.createPrivateEcdsaKey());
    const accountUrl = await storage.accountUrl(spec.directory);
    const client = new acme.Client({
      directoryUrl: spec.directory,
      accountKey,
      ...(accountUrl === undefined ? {} : { accountUrl }),
      backoffAttempts: 12,
      backoffMin: 500,
      backoffMax: 10_000,
    });
    if (accountUrl === undefined) {
      await client.createAccount({
        termsOfServiceAgreed: true,
        ...(spec.email === undefined ? {} : { contact: [`mailto:${spec.email}`] }),
      });
      await storage.saveAccountUrl(spec.directory, client.getAccountUrl());
    }
    return client;
  }
}
