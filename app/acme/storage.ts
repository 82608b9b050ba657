/**
 * Where ACME state lives on disk (`acme.storage`, relative to the config directory), created
 * 0700; every file 0600 and written by rename so a crash never leaves half a key:
 *
 *   <storage>/account.key            the ACME account key (one per storage directory)
 *   <storage>/account.json           the account URL per directory URL
 *   <storage>/certs/<name>.crt       certificate chain (PEM) for one host name
 *   <storage>/certs/<name>.key       its private key
 *
 * A restart reads the stored certificates back, so it does not order again.
 */
import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A certificate read back from storage. */
export interface StoredCertificate {
  readonly name: string;
  readonly cert: string;
  readonly key: string;
  readonly notBefore: number;
  readonly notAfter: number;
}

const NAME = /^[a-z0-9_.-]+$/;

/** The storage directory of one `acme:` section. */
export class AcmeStorage {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Creates the directories (0700; an existing one is tightened to 0700). */
  async open(): Promise<void> {
    await mkdir(join(this.dir, 'certs'), { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await chmod(join(this.dir, 'certs'), 0o700);
  }

  /** The account key, created by `create` on first use. */
  async accountKey(create: () => Promise<Buffer>): Promise<Buffer> {
    const path = join(this.dir, 'account.key');
    try {
      return await readFile(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const key = await create();
    await this.#write(path, key);
    return key;
  }

  /** The account URL registered at `directory` with the stored key, if any. */
  async accountUrl(directory: string): Promise<string | undefined> {
    try {
      const stored = JSON.parse(await readFile(join(this.dir, 'account.json'), 'utf8')) as Record<string, unknown>;
      const url = stored[directory];
      return typeof url === 'string' ? url : undefined;
    } catch {
      return undefined;
    }
  }

  /** Remembers the account URL for `directory` (a restart does not register again). */
  async saveAccountUrl(directory: string, url: string): Promise<void> {
    let stored: Record<string, unknown> = {};
    try {
      stored = JSON.parse(await readFile(join(this.dir, 'account.json'), 'utf8')) as Record<string, unknown>;
    } catch {}
    stored[directory] = url;
    await this.#write(join(this.dir, 'account.json'), Buffer.from(`${JSON.stringify(stored, null, 2)}\n`));
  }

  /** The stored certificate for `name`, or undefined (missing or unreadable: ordered again). */
  async load(name: string): Promise<StoredCertificate | undefined> {
    const base = this.#base(name);
    try {
      const [cert, key] = await Promise.all([readFile(`${base}.crt`, 'utf8'), readFile(`${base}.key`, 'utf8')]);
      const x509 = new X509Certificate(cert);
      return { name, cert, key, notBefore: Date.parse(x509.validFrom), notAfter: Date.parse(x509.validTo) };
    } catch {
      return undefined;
    }
  }

  /** Stores a certificate and its key (key first: a cert without its key is never visible). */
  async save(name: string, cert: string, key: string): Promise<void> {
    const base = this.#base(name);
    await this.#write(`${base}.key`, Buffer.from(key));
    await this.#write(`${base}.crt`, Buffer.from(cert));
  }

  #base(name: string): string {
    if (!NAME.test(name)) throw new Error(`acme: ${JSON.stringify(name)} is not a host name`);
    return join(this.dir, 'certs', name);
  }

  async #write(path: string, data: Buffer): Promise<void> {
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, data, { mode: 0o600 });
    await rename(tmp, path);
  }
}
