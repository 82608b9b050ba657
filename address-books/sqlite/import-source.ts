/**
 * What `switchboard db import` and `switchboard etcd import` read: a routes file (YAML/JSON
 * routing table), a whole Switchboard config (its `addressBook`), a BFE conf directory, or a
 * classic host → backends list (YAML/JSON array or CSV). Everything is validated before a
 * single row or key is written.
 */
import { stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { SwitchboardError } from '../../src/base/errors.ts';
import { CONFIG_FILE, readUserText } from '../../src/base/safe-file.ts';
import { formatHostPort } from '../../src/config/address.ts';
import { DEFAULT_POLICY, toPolicy } from '../../src/config/cluster.ts';
import { loadBfeDir } from '../bfe/bfe-json.ts';
import { compileRoutingTable } from '../bfe/compile.ts';
import type { RoutingTable } from '../bfe/routing-table.ts';
import { type FileEntry, parseEntries } from '../file/parse.ts';
import type { ServerRow } from './write.ts';

/** A validated import: the BFE model's routing table, or the classic list. */
export type ImportSource =
  | { readonly model: 'bfe'; readonly table: RoutingTable; readonly warnings: readonly string[] }
  | { readonly model: 'classic'; readonly rows: readonly ServerRow[]; readonly warnings: readonly string[] };

type Json = Record<string, unknown>;

/** Classic entries (parsed) back to plain rows: addresses as text, only non-default policy keys. */
export function entriesToRows(entries: readonly FileEntry[]): ServerRow[] {
  return entries.map((e) => {
    const backends = e.backends.map((b) => {
      if (!('address' in b)) return formatHostPort(b.host, b.port);
      const address = formatHostPort(b.address.host, b.address.port);
      return b.weight === 1 ? address : { address, weight: b.weight };
    });
    const policy: Json = {};
    const own = toPolicy(e) as unknown as Json;
    const defaults = DEFAULT_POLICY as unknown as Json;
    for (const [k, v] of Object.entries(own)) if (JSON.stringify(v) !== JSON.stringify(defaults[k])) policy[k] = v;
    return { host: e.host, path: e.path, backends, policy };
  });
}

/** The classic rows as the `file` book's YAML list. */
export function rowsToYaml(rows: readonly ServerRow[]): string {
  const list = rows.map((r) => ({
    host: r.host,
    ...(r.path === undefined ? {} : { path: r.path }),
    backends: r.backends,
    ...r.policy,
  }));
  return stringify(list, { lineWidth: 0 });
}

function fail(file: string, message: string): never {
  throw new SwitchboardError('SWB_ERR_CONFIG', `import ${file}: ${message}`);
}

async function parseFile(file: string): Promise<{ text: string; doc: unknown }> {
  let text: string;
  try {
    text = await readUserText(file, CONFIG_FILE);
  } catch (e) {
    fail(file, (e as Error).message);
  }
  if (extname(file).toLowerCase() === '.csv') return { text, doc: undefined };
  try {
    return { text, doc: extname(file).toLowerCase() === '.json' ? JSON.parse(text) : (parseYaml(text) ?? {}) };
  } catch (e) {
    fail(file, (e as Error).message.split('\n')[0] ?? '');
  }
}

function bfe(table: unknown, source: string, warnings: readonly string[] = []): ImportSource {
  return { model: 'bfe', table: compileRoutingTable(table, { source: `import ${source}` }).table, warnings };
}

async function fromConfig(ab: Json, file: string): Promise<ImportSource> {
  const dir = dirname(file);
  if (typeof ab.routes === 'string') return loadImportSource(resolve(dir, ab.routes));
  if (typeof ab.bfeConfDir === 'string') return loadImportSource(resolve(dir, ab.bfeConfDir));
  if (ab.name === 'file' && typeof ab.path === 'string') return loadImportSource(resolve(dir, ab.path));
  const { name: _n, ...table } = ab;
  return bfe(table, `${file}: addressBook`);
}

/** Loads and validates `path` (file or BFE conf directory); throws SWB_ERR_CONFIG naming every problem. */
export async function loadImportSource(path: string): Promise<ImportSource> {
  let isDir = false;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch (e) {
    fail(path, (e as Error).message);
  }
  if (isDir) {
    const loaded = await loadBfeDir(path);
    return bfe(loaded.table, path, loaded.warnings);
  }
  const { text, doc } = await parseFile(path);
  if (doc === undefined || Array.isArray(doc)) {
    return { model: 'classic', rows: entriesToRows(parseEntries(text, path)), warnings: [] };
  }
  if (typeof doc !== 'object' || doc === null) fail(path, 'expected a routing table, a config or a list');
  const ab = (doc as Json).addressBook;
  if (typeof ab === 'object' && ab !== null) return fromConfig(ab as Json, path);
  return bfe(doc, path);
}
