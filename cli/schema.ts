/**
 * `switchboard schema`: print the config's JSON Schema (draft 2020-12, plugin options included;
 * app/config-schema.ts) to stdout, for editors and CI (docs/config-schema.md).
 */
import { configJsonSchema } from '../app/config-schema.ts';
import { EXIT } from '../app/exit.ts';

/** Returns the exit code (0). */
export async function runSchema(): Promise<number> {
  process.stdout.write(`${JSON.stringify(await configJsonSchema(), null, 2)}\n`);
  return EXIT.ok;
}
