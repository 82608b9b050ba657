/**
 * `switchboard check` for `acme:` sections, beyond the schema (src/config/schema.ts: keys,
 * types, `tls: terminate`, a plaintext listener for http-01): the directory URL is https, the
 * `ca` file is a readable PEM certificate, and the storage directory (and its `certs`
 * subdirectory, if present) exists and is writable, or can be created (its parent is writable). Paths are relative to the config directory.
 * With `fleet:`, the storage is etcd instead (fleet-storage.ts): the fleet's encryption key must
 * be set and be 32 bytes of base64 (fleet-crypto.ts), and the storage directory is not checked.
 */
import { constants } from 'node:fs';
import { access, lstat, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { PEM_FILE, readUserText } from '../../src/base/safe-file.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import { loadEncryptionKey } from './fleet-crypto.ts';

async function writable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The refusal of a config with `fleet:` and `acme:` sections but no encryption key, if it is one. */
export function missingFleetKey(config: LoadedConfig['config']): string | undefined {
  const { fleet } = config;
  if (fleet === undefined || fleet.encryptionKey !== undefined || fleet.encryptionKeyFile !== undefined)
    return undefined;
  const i = config.listeners.findIndex((l) => l.acme !== undefined);
  if (i < 0) return undefined;
  return `fleet.encryptionKey: required with listeners[${i}].acme (ACME keys are kept in etcd encrypted): set fleet.encryptionKey or fleet.encryptionKeyFile (32 bytes, base64)`;
}

/** The fleet's key problems (missing with `acme:`, unreadable, not 32 bytes of base64). */
function checkFleetKey(loaded: Pick<LoadedConfig, 'config' | 'dir'>): string[] {
  const { fleet } = loaded.config;
  if (fleet === undefined) return [];
  const missing = missingFleetKey(loaded.config);
  if (missing !== undefined) return [missing];
  try {
    loadEncryptionKey(fleet, loaded.dir);
    return [];
  } catch (e) {
    return [(e as Error).message];
  }
}

/** One error line per problem, each naming its config path. */
export async function checkAcme(loaded: Pick<LoadedConfig, 'config' | 'dir'>): Promise<string[]> {
  const errors: string[] = checkFleetKey(loaded);
  for (const [i, l] of loaded.config.listeners.entries()) {
    const a = l.acme;
    if (a === undefined) continue;
    const where = `listeners[${i}].acme`;
    if (!a.directory.startsWith('https://')) errors.push(`${where}.directory: expected an https:// URL`);
    if (a.ca !== undefined) {
      const path = resolve(loaded.dir, a.ca);
      try {
        if (!(await readUserText(path, PEM_FILE)).includes('-----BEGIN CERTIFICATE-----'))
          errors.push(`${where}.ca: no PEM certificate in ${path}`);
      } catch (e) {
        errors.push(`${where}.ca: cannot read ${path}: ${(e as Error).message}`);
      }
    }
    if (loaded.config.fleet !== undefined) continue;
    const storage = resolve(loaded.dir, a.storage);
    try {
      const s = await stat(storage);
      if (!s.isDirectory()) errors.push(`${where}.storage: ${storage} is not a directory`);
      else if (!(await writable(storage))) errors.push(`${where}.storage: ${storage} is not writable`);
      else {
        // Every subdirectory the router writes (the router itself proves each with a probe file before any order).
        const certs = join(storage, 'certs');
        const c = await lstat(certs).catch(() => undefined);
        if (c !== undefined && !c.isDirectory()) errors.push(`${where}.storage: ${certs} is not a directory`);
        else if (c !== undefined && !(await writable(certs))) errors.push(`${where}.storage: ${certs} is not writable`);
      }
    } catch {
      if (!(await writable(dirname(storage))))
        errors.push(`${where}.storage: ${storage} does not exist and ${dirname(storage)} is not writable`);
    }
  }
  return errors;
}
