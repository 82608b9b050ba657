/**
 * Private keys at rest in etcd (issue 43 item 2): AES-256-GCM with the fleet's key
 * (`fleet.encryptionKey`, or the file `fleet.encryptionKeyFile`: 32 bytes, base64). A sealed
 * value is `aes-256-gcm:<iv>:<tag>:<ciphertext>` (base64url), with the etcd key it is stored
 * under as additional data, so a value copied under another name does not open. Every router
 * of a fleet needs the same key; a value that does not open is an error, never a reason to
 * order again.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SwitchboardError } from '../../src/base/errors.ts';

const PREFIX = 'aes-256-gcm';

/** Where the key comes from (the `fleet:` section's two keys). */
export interface EncryptionKeySource {
  readonly encryptionKey?: string | undefined;
  readonly encryptionKeyFile?: string | undefined;
}

/** The 32-byte key in `text` (base64, surrounding blanks ignored), or a reason it is not one. */
export function parseEncryptionKey(text: string): Buffer | string {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) && !/^[A-Za-z0-9_-]+={0,2}$/.test(t)) return 'expected base64';
  const key = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  return key.length === 32 ? key : `expected 32 bytes, base64 decodes to ${key.length}`;
}

/** Reads the fleet's key (file paths relative to `dir`); undefined when neither key is set. */
export function loadEncryptionKey(source: EncryptionKeySource, dir: string): Buffer | undefined {
  let text = source.encryptionKey;
  let where = 'fleet.encryptionKey';
  if (text === undefined && source.encryptionKeyFile !== undefined) {
    const path = resolve(dir, source.encryptionKeyFile);
    where = `fleet.encryptionKeyFile: ${path}`;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new SwitchboardError('SWB_ERR_CONFIG', `${where}: cannot read: ${(e as Error).message}`, { cause: e });
    }
  }
  if (text === undefined) return undefined;
  const key = parseEncryptionKey(text);
  if (typeof key === 'string') throw new SwitchboardError('SWB_ERR_CONFIG', `${where}: ${key}`);
  return key;
}

/** Seals and opens values with one key. */
export class KeySealer {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  /** `plain` encrypted, bound to `aad` (the etcd key it is stored under). */
  seal(plain: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(aad));
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url'));
    return `${PREFIX}:${parts.join(':')}`;
  }

  /** The plain text of a sealed value; rejects a value sealed with another key or under another name. */
  open(sealed: string, aad: string): string {
    const [prefix, iv, tag, data] = sealed.split(':');
    if (prefix !== PREFIX || iv === undefined || tag === undefined || data === undefined)
      throw storageError(`${aad}: not an encrypted value`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch (e) {
      throw storageError(`${aad}: cannot decrypt (is fleet.encryptionKey the same on every router?)`, e);
    }
  }
}

function storageError(message: string, cause?: unknown): SwitchboardError {
  return new SwitchboardError('SWB_ERR_ACME_STORAGE', `acme storage: ${message}`, { cause });
}
