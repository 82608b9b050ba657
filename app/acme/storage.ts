/**
 * Where ACME state lives on disk (`acme.storage`, relative to the config directory), created
 * 0700; every file 0600 and written by rename so a crash never leaves half a key:
 *
 *   <storage>/account.key            the ACME account key (one per storage directory)
 *   <storage>/account.json           the account URL per directory URL
 *   <storage>/certs/<name>.crt       certificate chain (PEM) for one host name
 *   <storage>/certs/<name>.key       its private key
 *
 * A restart reads the stored certificates back, so it does not order again. Before any order
 * the manager calls `probe()`: every directory above must take a new file (created exclusively
 * under an unpredictable name, never through a symlink, written, fsynced, removed), so a CA is
 * never asked for a certificate the router could not keep.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { constants, readdirSync } from 'node:fs';
import { chmod, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SwitchboardError } from '../../src/base/errors.ts';
import { FileReadError, PEM_FILE, readUserFile, readUserText } from '../../src/base/safe-file.ts';
import type { AcmeStore, StoredCertificate } from './store.ts';

export type { StoredCertificate } from './store.ts';

const NAME = /^[a-z0-9_.-]+$/;

/** The storage directory of one `acme:` section (the default `AcmeStore`, without `fleet:`). */
export class AcmeStorage implements AcmeStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  get where(): string {
    return this.dir;
  }

  /** The names with a `certs/<name>.crt` file (none when the directory cannot be read). */
  heldNames(): string[] {
    try {
      return readdirSync(join(this.dir, 'certs'))
        .filter((f) => f.endsWith('.crt'))
        .map((f) => f.slice(0, -'.crt'.length));
    } catch {
      return [];
    }
  }

  /** Creates the directories (0700; an existing one is tightened to 0700). */
  async open(): Promise<void> {
    await mkdir(join(this.dir, 'certs'), { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await chmod(join(this.dir, 'certs'), 0o700);
  }

  /**
   * Proves the storage can be written: creates the directories if missing, then in each one
   * creates a probe file exclusively (`O_EXCL | O_NOFOLLOW`, random name), writes, fsyncs and
   * removes it. Rejects with an `SWB_ERR_ACME_STORAGE` error naming the directory.
   */
  async probe(): Promise<void> {
    try {
      await this.open();
    } catch (e) {
      const { code, path } = e as NodeJS.ErrnoException;
      if (code === 'EEXIST' || code === 'ENOTDIR') throw storageError(`${path ?? this.dir} is not a directory`);
      throw storageError(`cannot create ${join(this.dir, 'certs')}`, e);
    }
    for (const dir of [this.dir, join(this.dir, 'certs')]) {
      // A directory may be a symlink the operator made (storage on another disk); the probe file itself never is.
      const s = await stat(dir).catch((e: unknown) => {
        throw storageError(`cannot stat ${dir}`, e);
      });
      if (!s.isDirectory()) throw storageError(`${dir} is not a directory`);
      const path = join(dir, `.probe-${randomBytes(12).toString('hex')}`);
      try {
        await writeExclusive(path, Buffer.from('switchboard acme storage probe\n'));
      } catch (e) {
        throw storageError(`cannot write in ${dir}`, e);
      }
      await unlink(path).catch((e: unknown) => {
        throw storageError(`cannot remove ${path}`, e);
      });
    }
  }

  /** The account key, created by `create` on first use. */
  async accountKey(create: () => Promise<Buffer>): Promise<Buffer> {
    const path = join(this.dir, 'account.key');
    try {
      return await readUserFile(path, PEM_FILE);
    } catch (e) {
      if (!(e instanceof FileReadError) || e.reason !== 'not_found') throw e;
    }
    const key = await create();
    await this.#write(path, key);
    return key;
  }

  /** The account URL registered at `directory` with the stored key, if any. */
  async accountUrl(directory: string): Promise<string | undefined> {
    try {
      const stored = JSON.parse(await readUserText(join(this.dir, 'account.json'), PEM_FILE)) as Record<
        string,
        unknown
      >;
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
      stored = JSON.parse(await readUserText(join(this.dir, 'account.json'), PEM_FILE)) as Record<string, unknown>;
    } catch {}
    stored[directory] = url;
    await this.#write(join(this.dir, 'account.json'), Buffer.from(`${JSON.stringify(stored, null, 2)}\n`));
  }

  /** The stored certificate for `name`, or undefined (missing or unreadable: ordered again). */
  async load(name: string): Promise<StoredCertificate | undefined> {
    const base = this.#base(name);
    try {
      const [cert, key] = await Promise.all([
        readUserText(`${base}.crt`, PEM_FILE),
        readUserText(`${base}.key`, PEM_FILE),
      ]);
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
    if (!NAME.test(name)) throw storageError(`${JSON.stringify(name)} is not a host name`);
    return join(this.dir, 'certs', name);
  }

  /** Writes `path` by rename from a fresh, fsynced temporary file (removed again on failure). */
  async #write(path: string, data: Buffer): Promise<void> {
    const tmp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
    try {
      await writeExclusive(tmp, data);
    } catch (e) {
      throw storageError(`cannot write ${path}`, e);
    }
    try {
      await rename(tmp, path);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw storageError(`cannot write ${path}`, e);
    }
  }
}

const EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

/**
 * Creates `path` (never an existing file or a symlink), writes `data` and fsyncs it, 0600. On a
 * failure after the create, the file is removed; nothing else is ever removed.
 */
async function writeExclusive(path: string, data: Buffer): Promise<void> {
  const fh = await open(path, EXCLUSIVE, 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw e;
  }
  await fh.close();
}

function storageError(message: string, cause?: unknown): SwitchboardError {
  const inner = cause === undefined ? '' : `: ${(cause as Error).message}`;
  return new SwitchboardError('SWB_ERR_ACME_STORAGE', `acme storage: ${message}${inner}`, { cause });
}
