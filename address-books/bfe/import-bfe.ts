/**
 * `switchboard import-bfe DIR`: read a BFE conf dir, validate it like a live load, and print
 * the equivalent routes YAML (warnings as comments on top).
 */
import { loadBfeDir } from './bfe-json.ts';
import { compileRoutingTable } from './compile.ts';
import { routingTableToYaml } from './yaml.ts';

/** The routes YAML equivalent to the BFE conf dir `dir`, and the warnings met on the way. */
export async function importBfeDir(dir: string): Promise<{ yaml: string; warnings: readonly string[] }> {
  const loaded = await loadBfeDir(dir);
  const snapshot = compileRoutingTable(loaded.table, { source: `import ${dir}` });
  const comments = [`imported from ${dir}`, ...loaded.warnings.map((w) => `warning: ${w}`)];
  return { yaml: routingTableToYaml(snapshot.table, comments), warnings: loaded.warnings };
}
