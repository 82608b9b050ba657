/**
 * Where a section's ACME state is kept (types only): the account, the certificates and their
 * keys. Two implementations: `AcmeStorage` (storage.ts), a directory on this router's disk, the
 * default; `FleetAcmeStorage` (fleet-storage.ts), etcd under the fleet prefix with the keys
 * encrypted, when `fleet:` is configured. The manager, the keeper and the client see only this.
 */

/** A certificate read back from storage. */
export interface StoredCertificate {
  readonly name: string;
  readonly cert: string;
  readonly key: string;
  readonly notBefore: number;
  readonly notAfter: number;
}

/** One section's ACME state. */
export interface AcmeStore {
  /** Where the state lives, for logs and as the identity of the store (a directory, or `etcd:<prefix>acme/`). */
  readonly where: string;
  /** Prepares the store (directories); nothing to do for etcd. */
  open(): Promise<void>;
  /** Proves the store takes writes now; rejects with an `SWB_ERR_ACME_STORAGE` error saying why. */
  probe(): Promise<void>;
  /** The account key, created by `create` on first use. */
  accountKey(create: () => Promise<Buffer>): Promise<Buffer>;
  /** The account URL registered at `directory` with the stored key, if any. */
  accountUrl(directory: string): Promise<string | undefined>;
  /** Remembers the account URL for `directory`. */
  saveAccountUrl(directory: string, url: string): Promise<void>;
  /**
   * The stored certificate for `name`, or undefined when there is none. The disk store also
   * answers undefined for an unreadable one (ordered again); the etcd store rejects when etcd
   * cannot be read or a key cannot be decrypted (never ordered again on a doubt).
   */
  load(name: string): Promise<StoredCertificate | undefined>;
  /** Stores a certificate and its key. */
  save(name: string, cert: string, key: string): Promise<void>;
  /** The names with a stored certificate, as far as is known now (synchronous: the disk's listing, etcd's watch). */
  heldNames(): string[];
}
