/**
 * `switchboard etcd import|export`: seed an etcd prefix from a routes file / config / BFE conf
 * dir, and dump it back as YAML. Import validates everything first, then writes only the keys
 * that differ and deletes the keys that are gone, in as few transactions as etcd allows
 * (`--max-txn-ops`, 128 by default): one for any table of ordinary size.
 */
import type { Command } from 'commander';
import type { Etcd3, IRequestOp } from 'etcd3';
import type { RoutingTable } from '../address-books/bfe/routing-table.ts';
import { routingTableToYaml } from '../address-books/bfe/yaml.ts';
import { keysToRead, normalisePrefix, tableToKeys } from '../address-books/etcd/layout.ts';
import { loadImportSource } from '../address-books/sqlite/import-source.ts';
import { compileBfeRead } from '../address-books/sqlite/view.ts';
import { SwitchboardError } from '../src/errors.ts';
import { exitCodeOf } from './exit.ts';

/** etcd's default `--max-txn-ops`. */
const MAX_TXN_OPS = 128;

/** Connection flags of both commands. */
export interface EtcdCliOptions {
  readonly endpoints: string;
  readonly prefix: string;
}

// The etcd client (and its gRPC stack) is loaded only when an etcd command runs.
const etcdBook = () => import('../address-books/etcd/book.ts');

async function client(o: EtcdCliOptions): Promise<Etcd3> {
  const { connectEtcd } = await import('../address-books/etcd/client.ts');
  const endpoints = o.endpoints.split(',').map((s) => s.trim());
  return connectEtcd({ endpoints, dialTimeout: 3000, reconnect: { initial: 100, max: 1000 } });
}

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
  const { kvs: have } = await (await etcdBook()).readPrefix(etcd, prefix);
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

/** The routes under `prefix`, validated, as YAML. */
export async function etcdExportYaml(etcd: Etcd3, prefix: string): Promise<string> {
  const { kvs, revision } = await (await etcdBook()).readPrefix(etcd, prefix);
  const view = compileBfeRead(keysToRead(kvs, prefix), `etcd ${prefix}`);
  return routingTableToYaml(view.table as RoutingTable, [`exported from etcd ${prefix} at revision ${revision}`]);
}

async function withClient(what: string, o: EtcdCliOptions, run: (etcd: Etcd3) => Promise<void>): Promise<void> {
  const etcd = await client(o);
  try {
    await run(etcd);
  } catch (e) {
    process.stderr.write(`etcd ${what}: ${(e as Error).message}\n`);
    process.exitCode = exitCodeOf(e);
  } finally {
    etcd.close();
  }
}

/** Adds the `etcd` command group to the program. */
export function addEtcdCommands(program: Command): void {
  const etcd = program.command('etcd').description('seed and dump the routes of the etcd address book');
  etcd
    .command('import')
    .description('validate a routes file, config or BFE conf dir, then write it under the prefix')
    .requiredOption('--endpoints <urls>', 'comma-separated etcd endpoints, e.g. http://127.0.0.1:2379')
    .option('--prefix <prefix>', 'key prefix', '/switchboard/')
    .option('--format <format>', 'value encoding: json | yaml', 'json')
    .argument('<source>', 'routes.yaml, switchboard.yaml or a BFE conf dir')
    .action((source: string, o: EtcdCliOptions & { format: string }) =>
      withClient('import', o, async (client) => {
        if (o.format !== 'json' && o.format !== 'yaml') {
          throw new SwitchboardError('SWB_ERR_CONFIG', '--format: expected json or yaml');
        }
        const loaded = await loadImportSource(source);
        if (loaded.model !== 'bfe') {
          throw new SwitchboardError(
            'SWB_ERR_CONFIG',
            `${source}: the etcd book holds routing tables, not classic lists`,
          );
        }
        for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
        const r = await etcdImportTable(client, loaded.table, normalisePrefix(o.prefix), o.format);
        process.stderr.write(`imported ${source}: ${r.put} keys written, ${r.deleted} deleted\n`);
      }),
    );
  etcd
    .command('export')
    .description('print the routes under the prefix as YAML')
    .requiredOption('--endpoints <urls>', 'comma-separated etcd endpoints')
    .option('--prefix <prefix>', 'key prefix', '/switchboard/')
    .action((o: EtcdCliOptions) =>
      withClient('export', o, async (client) => {
        process.stdout.write(await etcdExportYaml(client, normalisePrefix(o.prefix)));
      }),
    );
}
