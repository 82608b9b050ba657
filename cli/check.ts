/**
 * `switchboard check`: validate a config in one pass (app/check-config.ts) and print every
 * problem, one per line `<config path>: <message>` on stderr, then the checks that could not run
 * on what has errors (`2 further checks skipped until these are fixed:`, each indented with why),
 * warnings as `warning: <file>: …` (the config still valid). A routes file (what `import-bfe` writes) or a `file` book's list is
 * recognised: the output says how to reference it from a config. Exit codes: app/exit.ts (0
 * valid, 3 invalid, 1 when only the address book's store did not answer).
 */
import { basename } from 'node:path';
import { type CheckResult, checkConfigFile } from '../app/check-config.ts';
import { EXIT } from '../app/exit.ts';

/** Returns the exit code: 0 valid, 3 invalid, 1 when only the address book's store did not answer. */
export async function runCheck(file: string): Promise<number> {
  const result = await checkConfigFile(file);
  if (result.errors.length > 0) {
    const skipped = result.kind === 'config' ? result.skipped : [];
    return fail([...result.errors, ...skippedLines(skipped)], result.kind === 'config' && result.down);
  }
  process.stdout.write(okText(result));
  return EXIT.ok;
}

/** What a valid file prints: the config's warnings and `ok`, or how to reference a routes file or list. */
function okText(result: CheckResult): string {
  const reference = `Reference it from a config in the same directory (paths are relative to the config file):\n`;
  switch (result.kind) {
    case 'config':
      for (const w of result.warnings) process.stderr.write(`warning: ${result.path}: ${w}\n`);
      return `config ${result.path}: ok\n`;
    case 'routes':
      return (
        `${result.path}: ok, a routes file (${result.products} products, ${result.clusters} clusters), not a router config.\n` +
        reference +
        `  addressBook:\n    name: bfe\n    routes: ${basename(result.path)}\n`
      );
    case 'list':
      return (
        `${result.path}: ok, a file address book list (${result.entries} entries), not a router config.\n` +
        reference +
        `  addressBook:\n    name: file\n    path: ${basename(result.path)}\n`
      );
  }
}

/** `N further checks skipped until these are fixed:`, then each with why, indented. */
function skippedLines(skipped: readonly string[]): string[] {
  if (skipped.length === 0) return [];
  const n = skipped.length;
  return [`${n} further check${n === 1 ? '' : 's'} skipped until these are fixed:`, ...skipped.map((s) => `  ${s}`)];
}

function fail(lines: readonly string[], down: boolean): number {
  for (const l of lines) process.stderr.write(`${l}\n`);
  return down ? EXIT.failure : EXIT.config;
}
