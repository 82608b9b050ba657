/**
 * The operations behind `switchboard etcd import|export`: write a routing table under a prefix
 * (only the keys that differ, deleting the keys that are gone, in as few transactions as etcd
 * allows: `--max-txn-ops`, 128 by default, so one for any table of ordinary size), and read the
 * prefix back, validated, as YAML. `etcdImport` is the command's whole import: the source loaded
 * and validated as `switchboard db import` loads it, then written.
 */
import type { Etcd3, IRequestOp } from 'etcd3';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { RoutingTable } from '../bfe/routing-table.ts';
import { routingTableToYaml } from '../bfe/yaml.ts';
import { loadImportSource } from '../sqlite/import-source.ts';
import { compileBfeRead } from '../sqlite/view.ts';
import { readPrefix } from './book.ts';
import { keysToRead, normalisePrefix, tableToKeys } from './layout.ts';

/** etcd's default `--max-txn-ops`. */
const MAX_TXN_OPS = 128;

/** Key order that keeps every intermediate batch as valid as possible: parents before children. */
function rank(key: string, prefix: string): number {
  const order = ['clusters/', 'backends/', 'conditions/', 'products/', 'defaultProduct'];
  const i = order.findIndex((p) => key.startsWith(prefix + p));
  return i < 0 ? order.length : i;
}

/** Writes `table` under `prefix`: puts for changed keys, deletes for removed ones. */
export async function etcdImportTable(
  etcd: Etcd3,
  table: RoutingTable,
  prefix: string,
  format: 'json' | 'yaml' = 'json',
): Promise<{ put: number; deleted: number }> {
  const want = tableToKeys(table, prefix, format);
  const { kvs: have } = await readPrefix(etcd, prefix);
  const puts = [...want].filter(([k, v]) => have.get(k) !== v).sort((a, b) => rank(a[0], prefix) - rank(b[0], prefix));
  const deletes = [...have.keys()].filter((k) => !want.has(k));
  const ops: IRequestOp[] = [
    ...puts.map(([k, v]) => ({ request_put: { key: Buffer.from(k), value: Buffer.from(v) } })),
    ...deletes.map((k) => ({ request_delete_range: { key: Buffer.from(k) } })),
  ];
  for (let i = 0; i < ops.length; i += MAX_TXN_OPS) {
    await etcd.kv.txn({ compare: [], success: ops.slice(i, i + MAX_TXN_OPS), failure: [] });
  }
  return { put: puts.length, deleted: deletes.length };
}

/**
 * Loads and validates `source` (a routes file, a config or a BFE conf directory; a classic list
 * is refused: the etcd book holds routing tables), then writes its table under `prefix`.
 * `warnings` are the BFE keys the source had that Switchboard ignores.
 */
export async function etcdImport(
  etcd: Etcd3,
  source: string,
  prefix: string,
  format: 'json' | 'yaml',
): Promise<{ put: number; deleted: number; warnings: readonly string[] }> {
  const loaded = await loadImportSource(source);
  if (loaded.model !== 'bfe') {
    throw new SwitchboardError('SWB_ERR_CONFIG', `${source}: the etcd book holds routing tables, not classic lists`);
  }
  const written = await etcdImportTable(etcd, loaded.table, normalisePrefix(prefix), format);
  return { ...written, warnings: loaded.warnings };
}

/** The routes under `prefix`, validated, as YAML. */
export async function etcdExportYaml(etcd: Etcd3, prefix: string): Promise<string> {
  const { kvs, revision } = await readPrefix(etcd, prefix);
  const view = compileBfeRead(keysToRead(kvs, prefix), `etcd ${prefix}`);
  return routingTableToYaml(view.table as RoutingTable, [`exported from etcd ${prefix} at revision ${revision}`]);
}
