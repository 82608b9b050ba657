/**
 * The text of a book's source file; a missing or unreadable file is a config error naming the
 * option that points at it (`addressBook.path`, `addressBook.routes`).
 */
import { readFile } from 'node:fs/promises';
import { SwitchboardError } from '../../src/errors.ts';

export async function readSourceFile(file: string, option: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : `cannot read (${code ?? (e as Error).message})`;
    throw new SwitchboardError('SWB_ERR_ADDRESS_BOOK', `${option}: ${why}: ${file}`);
  }
}
