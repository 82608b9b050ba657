/**
 * `switchboard import-bfe DIR`: print a BFE conf directory's routing as Switchboard YAML.
 * Warnings (BFE keys Switchboard ignores) go to stderr.
 */
import { importBfeDir } from '../address-books/bfe/index.ts';
import { exitCodeOf } from '../app/exit.ts';
import { isSwitchboardError } from '../src/base/errors.ts';

/** Returns the exit code: 0 printed, 3 the directory is missing or invalid (cli/exit.ts). */
export async function runImportBfe(dir: string): Promise<number> {
  try {
    const { yaml, warnings } = await importBfeDir(dir);
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
    process.stdout.write(yaml);
    return 0;
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    process.stderr.write(`import-bfe ${dir}: ${e.message}\n`);
    return exitCodeOf(e);
  }
}
