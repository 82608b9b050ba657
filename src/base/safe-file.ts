/**
 * Reading a file a user names (config, routes, address lists, PEM files) without trusting what
 * the path leads to. `fs.readFile` on a FIFO blocks a libuv threadpool thread until a writer
 * comes (four such reads and `dns.lookup`, every other fs call and the next reload wait
 * behind them); on `/dev/zero` it reads until memory runs out.
 *
 * 1. Open with `O_RDONLY | O_NONBLOCK | O_NOCTTY`: a FIFO opened non-blocking for reading
 *    returns at once, a terminal never becomes the controlling one. Symlinks are followed (a
 *    certbot `live/` path is one); what they lead to is judged in step 2.
 * 2. `fstat` the opened descriptor (not the path: it cannot be swapped in between) and refuse
 *    what is not a regular file, naming what it is (a FIFO, a character device, a directory…).
 * 3. Refuse a file larger than the caller's cap, then read at most cap + 1 bytes, so a file
 *    that grows after the fstat is refused too rather than read without end.
 *
 * Every refusal is a `FileReadError` (code `SWB_ERR_FILE`) whose message names the path:
 * `file not found: <path>`, `cannot read <path>: a FIFO, not a regular file`, `cannot read
 * <path>: larger than 1 MiB (the limit for PEM files)`. Callers prefix where the path came from.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { SwitchboardError } from './errors.ts';

/** Certificates, keys and CA bundles: 1 MiB (a long chain is tens of KiB). */
export const PEM_FILE_LIMIT = 1024 * 1024;
/** Config, routes and address-list files: 64 MiB (a 10,000-host routes file is a few MiB). */
export const CONFIG_FILE_LIMIT = 64 * 1024 * 1024;

/** A cap and the kind of file it is for, as the error names it. */
export interface FileLimit {
  readonly bytes: number;
  /** `PEM files`, `config files`: said in the too-large message. */
  readonly what: string;
}

/** The cap for certificates, keys and CA bundles. */
export const PEM_FILE: FileLimit = { bytes: PEM_FILE_LIMIT, what: 'PEM files' };
/** The cap for the config file and the files it names for routing (routes, lists, BFE, caches). */
export const CONFIG_FILE: FileLimit = { bytes: CONFIG_FILE_LIMIT, what: 'config files' };

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK = 64 * 1024;

/** Why a user-named file was not read; `path` is the file, `reason` a stable word for callers. */
export class FileReadError extends SwitchboardError {
  readonly path: string;
  readonly reason: 'not_found' | 'not_regular' | 'too_large' | 'unreadable';
  constructor(path: string, reason: FileReadError['reason'], message: string, options?: ErrorOptions) {
    super('SWB_ERR_FILE', message, options);
    this.name = 'FileReadError';
    this.path = path;
    this.reason = reason;
  }
}

/** What a non-regular file is, for the message. */
function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isDirectory()) return 'a directory';
  if (st.isSocket()) return 'a socket';
  return 'not a plain file';
}

function mib(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

function openError(path: string, e: unknown): FileReadError {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new FileReadError(path, 'not_found', `file not found: ${path}`, { cause: e });
  return new FileReadError(path, 'unreadable', `cannot read ${path}: ${(e as Error).message}`, { cause: e });
}

function notRegular(path: string, st: Stats): FileReadError {
  return new FileReadError(path, 'not_regular', `cannot read ${path}: ${kindOf(st)}, not a regular file`);
}

function tooLarge(path: string, limit: FileLimit): FileReadError {
  return new FileReadError(
    path,
    'too_large',
    `cannot read ${path}: larger than ${mib(limit.bytes)} (the limit for ${limit.what})`,
  );
}

/** Appends `n` bytes of `chunk` to `parts`; true while the total stays within the cap. */
function within(parts: Buffer[], chunk: Buffer, n: number, total: number, limit: FileLimit): boolean {
  parts.push(n === chunk.length ? chunk : chunk.subarray(0, n));
  return total <= limit.bytes;
}

/** Reads a user-named regular file of at most `limit` bytes (see the file header). */
export async function readUserFile(path: string, limit: FileLimit): Promise<Buffer> {
  let fh: FileHandle;
  try {
    fh = await open(path, FLAGS);
  } catch (e) {
    throw openError(path, e);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(path, st);
    if (st.size > limit.bytes) throw tooLarge(path, limit);
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, limit.bytes + 1 - total));
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (!within(parts, chunk, bytesRead, total, limit)) throw tooLarge(path, limit);
    }
    return Buffer.concat(parts, total);
  } catch (e) {
    throw e instanceof FileReadError ? e : openError(path, e);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** `readUserFile` as UTF-8 text. */
export async function readUserText(path: string, limit: FileLimit): Promise<string> {
  return (await readUserFile(path, limit)).toString('utf8');
}

/** Synchronous form, for the few callers that build lazily on the event loop (upstream TLS). */
export function readUserFileSync(path: string, limit: FileLimit): Buffer {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (e) {
    throw openError(path, e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(path, st);
    if (st.size > limit.bytes) throw tooLarge(path, limit);
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, limit.bytes + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (!within(parts, chunk, n, total, limit)) throw tooLarge(path, limit);
    }
    return Buffer.concat(parts, total);
  } catch (e) {
    throw e instanceof FileReadError ? e : openError(path, e);
  } finally {
    closeSync(fd);
  }
}
