/**
 * ACME state in etcd under the fleet prefix (issue 43 item 2), shared by every router of the
 * fleet; `AcmeStore` (store.ts) for the manager:
 *
 *   <prefix>acme/account/key              the account key (sealed), created once: the first
 *                                         router to write it wins, the others read it back
 *   <prefix>acme/account/urls/<sha256>    {directory, url} per directory URL
 *   <prefix>acme/certs/<name>             {cert, key (sealed), notAfter, by, at}: one value, so
 *                                         a certificate is never seen without its key
 *   <prefix>acme/challenges/…             pending answers (fleet-challenges.ts)
 *   <prefix>locks/acme/order/<name>       the order lock (app/fleet/lock.ts)
 *
 * Private keys are sealed with the fleet's key (fleet-crypto.ts) under their own etcd key as
 * additional data. `heldNames` comes from the certificates watch (fleet-sync.ts).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { Fleet } from '../fleet/contract.ts';
import type { KeySealer } from './fleet-crypto.ts';
import type { AcmeStore, StoredCertificate } from './store.ts';

/** The key prefix of the fleet's certificates (watched by every router). */
export const CERTS = 'acme/certs/';
const ACCOUNT_KEY = 'acme/account/key';
const NAME = /^[a-z0-9_.-]+$/;

/** The JSON value of `acme/certs/<name>`. */
export interface FleetCertValue {
  readonly cert: string;
  /** Sealed (fleet-crypto.ts), never PEM. */
  readonly key: string;
  readonly notAfter: string;
  /** The member id of the router that ordered it, and when it stored it. */
  readonly by: string;
  readonly at: string;
}

/** The fleet's ACME store. */
export class FleetAcmeStorage implements AcmeStore {
  readonly where: string;
  readonly #fleet: Fleet;
  readonly #sealer: KeySealer | undefined;
  readonly #held: () => string[];

  /** `sealer` undefined: no key configured; every call that needs one rejects saying so. */
  constructor(fleet: Fleet, prefix: string, sealer: KeySealer | undefined, held: () => string[]) {
    this.where = `etcd:${prefix}acme/`;
    this.#fleet = fleet;
    this.#sealer = sealer;
    this.#held = held;
  }

  async open(): Promise<void> {}

  /** A write and a delete of `acme/probe/<id>`: etcd answers and takes writes; a key is configured. */
  async probe(): Promise<void> {
    this.#seal();
    if (this.#fleet.degraded) throw storageError('etcd unreachable (fleet degraded): no order until it answers');
    const key = `acme/probe/${this.#fleet.id}`;
    try {
      await this.#fleet.put(key, new Date().toISOString(), { lease: 'member' });
      await this.#fleet.delete(key);
    } catch (e) {
      throw storageError(`cannot write ${this.where}probe`, e);
    }
  }

  async accountKey(create: () => Promise<Buffer>): Promise<Buffer> {
    const sealer = this.#seal();
    const stored = await this.#get(ACCOUNT_KEY);
    if (stored !== undefined) return Buffer.from(sealer.open(stored, ACCOUNT_KEY));
    const key = await create();
    const mine = await this.#fleet.create(ACCOUNT_KEY, sealer.seal(key.toString(), ACCOUNT_KEY)).catch((e: unknown) => {
      throw storageError(`cannot write ${ACCOUNT_KEY}`, e);
    });
    if (mine) return key;
    // Another router created it first: one account for the fleet.
    const theirs = await this.#get(ACCOUNT_KEY);
    if (theirs === undefined) throw storageError(`${ACCOUNT_KEY} vanished while it was created`);
    return Buffer.from(sealer.open(theirs, ACCOUNT_KEY));
  }

  async accountUrl(directory: string): Promise<string | undefined> {
    const v = await this.#get(urlKey(directory));
    if (v === undefined) return undefined;
    const parsed = JSON.parse(v) as { directory?: unknown; url?: unknown };
    return parsed.directory === directory && typeof parsed.url === 'string' ? parsed.url : undefined;
  }

  async saveAccountUrl(directory: string, url: string): Promise<void> {
    await this.#put(urlKey(directory), JSON.stringify({ directory, url }));
  }

  async load(name: string): Promise<StoredCertificate | undefined> {
    const key = certKey(name);
    const v = await this.#get(key);
    return v === undefined ? undefined : this.decode(name, v);
  }

  /** A certificate from its `acme/certs/<name>` value (rejects one whose key does not open). */
  decode(name: string, value: string): StoredCertificate {
    const key = certKey(name);
    let parsed: Partial<FleetCertValue>;
    try {
      parsed = JSON.parse(value) as Partial<FleetCertValue>;
    } catch (e) {
      throw storageError(`${key}: not JSON`, e);
    }
    if (typeof parsed.cert !== 'string' || typeof parsed.key !== 'string')
      throw storageError(`${key}: expected {cert, key}`);
    const pem = this.#seal().open(parsed.key, key);
    const x509 = new X509Certificate(parsed.cert);
    return {
      name,
      cert: parsed.cert,
      key: pem,
      notBefore: Date.parse(x509.validFrom),
      notAfter: Date.parse(x509.validTo),
    };
  }

  async save(name: string, cert: string, key: string): Promise<void> {
    const k = certKey(name);
    const value: FleetCertValue = {
      cert,
      key: this.#seal().seal(key, k),
      notAfter: new X509Certificate(cert).validTo,
      by: this.#fleet.id,
      at: new Date().toISOString(),
    };
    await this.#put(k, JSON.stringify(value));
  }

  heldNames(): string[] {
    return this.#held();
  }

  #seal(): KeySealer {
    if (this.#sealer === undefined)
      throw storageError('fleet.encryptionKey or fleet.encryptionKeyFile is required to keep ACME keys in etcd');
    return this.#sealer;
  }

  async #get(key: string): Promise<string | undefined> {
    try {
      return await this.#fleet.get(key);
    } catch (e) {
      throw storageError(`cannot read ${key}`, e);
    }
  }

  async #put(key: string, value: string): Promise<void> {
    try {
      await this.#fleet.put(key, value);
    } catch (e) {
      throw storageError(`cannot write ${key}`, e);
    }
  }
}

/** `acme/certs/<name>` (the name checked: it becomes part of an etcd key). */
export function certKey(name: string): string {
  if (!NAME.test(name)) throw storageError(`${JSON.stringify(name)} is not a host name`);
  return `${CERTS}${name}`;
}

function urlKey(directory: string): string {
  return `acme/account/urls/${createHash('sha256').update(directory).digest('hex').slice(0, 32)}`;
}

function storageError(message: string, cause?: unknown): SwitchboardError {
  const inner = cause === undefined ? '' : `: ${(cause as Error).message}`;
  return new SwitchboardError('SWB_ERR_ACME_STORAGE', `acme storage: ${message}${inner}`, { cause });
}
