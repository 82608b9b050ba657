/**
 * Reading the PEM files a config names: paths resolve against the config file's directory, and
 * every failure becomes one config error line that names the config path and the file. Files
 * are read through src/base/safe-file.ts: a regular file of at most 1 MiB, or a refusal (a FIFO or
 * `/dev/zero` planted at a certificate path never blocks a thread or fills memory).
 */
import { isAbsolute, resolve } from 'node:path';
import { FileReadError, PEM_FILE, readUserFile, readUserFileSync } from '../base/safe-file.ts';

/** `file` resolved against the config directory (absolute paths stay as they are). */
export function configPath(dir: string, file: string): string {
  return isAbsolute(file) ? file : resolve(dir, file);
}

/** Why a file could not be read: `file not found: <path>`, else `cannot read <path>: <reason>`. */
function unreadable(path: string, e: unknown): string {
  if (e instanceof FileReadError) return e.message;
  return `cannot read ${path}: ${(e as Error).message}`;
}

/** Reads `file`; on failure pushes `<where>: file not found: <path>` (or why else) and returns undefined. */
export async function readPem(dir: string, file: string, where: string, errors: string[]): Promise<Buffer | undefined> {
  const path = configPath(dir, file);
  try {
    return await readUserFile(path, PEM_FILE);
  } catch (e) {
    errors.push(`${where}: ${unreadable(path, e)}`);
    return undefined;
  }
}

/** Synchronous form for lazily built upstream contexts; throws a FileReadError naming the file. */
export function readPemSync(dir: string, file: string): Buffer {
  return readUserFileSync(configPath(dir, file), PEM_FILE);
}

/** The message of an OpenSSL / Node error, lower-cased at the start (error text style). */
export function reasonOf(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.length > 0 ? m[0]!.toLowerCase() + m.slice(1) : m;
}
