/**
 * A book's source file, as text (`readSourceFile`) or as bytes (`readSourceBytes`: a big JSON
 * routes file is scanned in bytes, `json-steps.ts`, so no whole-file string is made); a missing
 * or unreadable file is a config error naming the option that points at it
 * (`addressBook.path`, `addressBook.routes`). Read through src/base/safe-file.ts: a regular file of
 * at most 64 MiB, so a FIFO or a device at the path is refused instead of read.
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import { CONFIG_FILE, readUserFile } from '../../src/base/safe-file.ts';

/** The file's text (UTF-8). */
export async function readSourceFile(file: string, option: string): Promise<string> {
  return (await readSourceBytes(file, option)).toString('utf8');
}

/** The file's bytes. */
export function readSourceBytes(file: string, option: string): Promise<Buffer> {
  return readUserFile(file, CONFIG_FILE).catch((e: unknown) => unreadable(e, option));
}

function unreadable(e: unknown, option: string): never {
  throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${option}: ${(e as Error).message}`);
}
