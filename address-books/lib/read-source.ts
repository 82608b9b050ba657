/**
 * A book's source file, as text (`readSourceFile`) or as bytes (`readSourceBytes`: a big JSON
 * routes file is scanned in bytes, `json-steps.ts`, so no whole-file string is made); a missing
 * or unreadable file is a config error naming the option that points at it
 * (`addressBook.path`, `addressBook.routes`).
 */
import { readFile } from 'node:fs/promises';
import { SwitchboardError } from '../../src/errors.ts';

/** The file's text (UTF-8). */
export function readSourceFile(file: string, option: string): Promise<string> {
  return readFile(file, 'utf8').catch((e: unknown) => unreadable(e, file, option));
}

/** The file's bytes. */
export function readSourceBytes(file: string, option: string): Promise<Buffer> {
  return readFile(file).catch((e: unknown) => unreadable(e, file, option));
}

function unreadable(e: unknown, file: string, option: string): never {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'file not found' : `cannot read (${code ?? (e as Error).message})`;
  throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${option}: ${why}: ${file}`);
}
