/**
 * The `switchboard` command line (commander). Each command lives in its own file.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { runStart } from '../app/start.ts';
import { runCheck } from './check.ts';
import { addDbCommands } from './db.ts';
import { addEtcdCommands } from './etcd.ts';
import { reportError } from './exit.ts';
import { runImportBfe } from './import-bfe.ts';
import { runRoute } from './route.ts';
import { runSchema } from './schema.ts';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const DEFAULT_CONFIG = 'conf/switchboard.yaml';

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

/** Builds the program; `main` runs it. */
export function program(): Command {
  const p = new Command('switchboard')
    .description('A TCP-level, L7-aware router')
    .version(pkg.version)
    // Usage errors exit 2 (cli/exit.ts); set before the commands so each inherits it.
    .exitOverride()
    .option('--verbose', 'print the stack of an unexpected error (also SWITCHBOARD_DEBUG=1)');
  p.command('start')
    .description('run the router')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG)
    .option('--panel <name>', 'panel: net | http2 | worker')
    .option('--workers <n>', 'worker threads (worker panel)', positiveInt)
    .option('--listen <addr>', 'replace all listeners with one plaintext listener (repeatable)', collect, [])
    .action(async (o: { config: string; panel?: string; workers?: number; listen: string[] }) => {
      await runStart(o.config, {
        ...(o.panel !== undefined ? { panel: o.panel } : {}),
        ...(o.workers !== undefined ? { workers: o.workers } : {}),
        ...(o.listen.length > 0 ? { listen: o.listen } : {}),
      });
    });
  p.command('check')
    .description('validate a config and print every error')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG)
    .action(async (o: { config: string }) => {
      process.exitCode = await runCheck(o.config);
    });
  p.command('route')
    .description('explain the routing decision for a request, without sending traffic')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG)
    .requiredOption('--host <host>', 'Host header (or SNI)')
    .option('--path <path>', 'request path', '/')
    .option('--method <method>', 'request method', 'GET')
    .option('--header <k:v>', 'a request header (repeatable)', collect, [])
    .option('--client <ip>', 'client IP', '127.0.0.1')
    .option('--vip <ip>', 'VIP (PROXY destination)')
    .option('--sni <name>', 'TLS SNI (TLS passthrough: no path)')
    .option('--alpn <list>', 'comma-separated ALPN protocols offered')
    .option('--listener <name>', 'the listener whose pathNormalization applies (default: the first)')
    .option('--json', 'print JSON')
    .action(async (o: Parameters<typeof runRoute>[0]) => {
      process.exitCode = await runRoute(o);
    });
  p.command('import-bfe')
    .description("print a BFE conf directory's routing as Switchboard YAML")
    .argument('<dir>', 'BFE conf directory (host_rule.data, route_rule.data, cluster_conf.data, ...)')
    .action(async (dir: string) => {
      process.exitCode = await runImportBfe(dir);
    });
  p.command('schema')
    .description('print the JSON Schema of the config, plugin options included (docs/config-schema.md)')
    .action(async () => {
      process.exitCode = await runSchema();
    });
  addDbCommands(p);
  addEtcdCommands(p);
  return p;
}

/** Runs the CLI; every failure is reported by cli/exit.ts (one line each, exit codes there). */
export async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (e) {
    process.exit(reportError(e));
  }
}
