/**
 * `switchboard etcd import|export`: seed an etcd prefix from a routes file / config / BFE conf
 * dir (validated whole first), and dump it back as YAML. The load, the writes and the read are
 * the book's (`address-books/etcd/store.ts` `etcdImport`, `etcdExportYaml`: only the keys that
 * differ, in as few transactions as etcd allows); this file parses the arguments and prints.
 */
import { type Command, Option } from 'commander';
import type { Etcd3 } from 'etcd3';
import { normalisePrefix } from '../address-books/etcd/layout.ts';
import { exitCodeOf } from '../app/exit.ts';

/** Connection flags of both commands. */
export interface EtcdCliOptions {
  readonly endpoints: string;
  readonly prefix: string;
}

// The etcd client (and its gRPC stack) is loaded only when an etcd command runs.
const etcdStore = () => import('../address-books/etcd/store.ts');

async function client(o: EtcdCliOptions): Promise<Etcd3> {
  const { connectEtcd } = await import('../address-books/etcd/client.ts');
  const endpoints = o.endpoints.split(',').map((s) => s.trim());
  return connectEtcd({ endpoints, dialTimeout: 3000, reconnect: { initial: 100, max: 1000 } });
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
    // A bad value is a usage error (exit 2), as for every option value (app/exit.ts).
    .addOption(new Option('--format <format>', 'value encoding').choices(['json', 'yaml']).default('json'))
    .argument('<source>', 'routes.yaml, switchboard.yaml or a BFE conf dir')
    .action((source: string, o: EtcdCliOptions & { format: 'json' | 'yaml' }) =>
      withClient('import', o, async (client) => {
        const r = await (await etcdStore()).etcdImport(client, source, o.prefix, o.format);
        for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
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
        process.stdout.write(await (await etcdStore()).etcdExportYaml(client, normalisePrefix(o.prefix)));
      }),
    );
}
