/**
 * Reading the PEM files a config names: paths resolve against the config file's directory, and
 * every failure becomes one config error line that names the config path and the file.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

/** `file` resolved against the config directory (absolute paths stay as they are). */
export function configPath(dir: string, file: string): string {
  return isAbsolute(file) ? file : resolve(dir, file);
}

/** Why a file could not be read: `file not found: <path>`, else `cannot read <path>: <reason>`. */
function unreadable(path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? `file not found: ${path}` : `cannot read ${path}: ${(e as Error).message}`;
}

/** Reads `file`; on failure pushes `<where>: file not found: <path>` (or why else) and returns undefined. */
export async function readPem(dir: string, file: string, where: string, errors: string[]): Promise<Buffer | undefined> {
  const path = configPath(dir, file);
  try {
    return await readFile(path);
  } catch (e) {
    errors.push(`${where}: ${unreadable(path, e)}`);
    return undefined;
  }
}

/** Synchronous form for lazily built upstream contexts; throws an Error naming the file. */
export function readPemSync(dir: string, file: string): Buffer {
  const path = configPath(dir, file);
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(unreadable(path, e));
  }
}

/** The message of an OpenSSL / Node error, lower-cased at the start (error text style). */
export function reasonOf(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.length > 0 ? m[0]!.toLowerCase() + m.slice(1) : m;
}
