/**
 * The `switchboard` command line (commander). Each command lives in its own file.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { reportError } from '../app/exit.ts';
import { builtinPanels } from '../app/panels.ts';
import { runStart } from '../app/run-start.ts';
import { didYouMean } from '../src/base/suggest.ts';
import { parseHostPort } from '../src/config/address.ts';
import { LOG_LEVELS } from '../src/config/schema.ts';
import { releaseYoungGeneration } from '../src/process/young-generation.ts';
import { runCheck } from './check.ts';
import { addDbCommands } from './db.ts';
import { addEtcdCommands } from './etcd.ts';
import { addHelp } from './help.ts';
import { runImportBfe } from './import-bfe.ts';
import { addRouteCommand } from './route.ts';
import { runSchema } from './schema.ts';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const DEFAULT_CONFIG = 'conf/switchboard.yaml';

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** `--panel`: a built-in panel's name (a bad one is a usage error, exit 2, not a config error). */
function panelName(v: string): string {
  const known = Object.keys(builtinPanels);
  if (known.includes(v)) return v;
  throw new InvalidArgumentError(
    `unknown panel ${JSON.stringify(v)}${didYouMean(v, known)}; known: ${known.join(', ')}`,
  );
}

/** `--listen`: a bad address is a usage error (exit 2) naming the flag, not a config error. */
function collectAddress(v: string, prev: string[]): string[] {
  if (parseHostPort(v, true) === undefined) {
    throw new InvalidArgumentError('expected host:port (IPv6 in brackets), e.g. 0.0.0.0:8080 or [::]:8080');
  }
  return [...prev, v];
}

interface StartFlags {
  config: string;
  panel?: string;
  workers?: number;
  listen: string[];
  logLevel?: string;
  logFormat?: string;
  watch: boolean;
  pidFile?: string;
}

/** Builds the program; `main` runs it. */
export function program(): Command {
  const p = new Command('switchboard')
    .description('A TCP-level, L7-aware router')
    .version(pkg.version)
    // Usage errors exit 2 (cli/exit.ts); set before the commands so each inherits it.
    .exitOverride()
    .option('--verbose', 'print the stack of an unexpected error (also SWITCHBOARD_DEBUG=1)')
    // bin/switchboard.js held V8's young generation while the modules loaded; `start` caps it
    // once the router runs (app/start.ts), every other command gets V8's default growth back.
    .hook('preAction', (_program, action) => {
      if (action.name() !== 'start') releaseYoungGeneration();
    });
  p.command('start')
    .description('run the router')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG)
    // Every option value is checked here, so a bad one is a usage error (exit 2, app/exit.ts).
    .option('--panel <name>', `replace panel.name: ${Object.keys(builtinPanels).join(' | ')}`, panelName)
    .option('--workers <n>', 'worker threads (worker panel)', positiveInt)
    .option('--listen <addr>', 'replace all listeners with one plaintext listener (repeatable)', collectAddress, [])
    .addOption(new Option('--log-level <level>', 'replace log.level').choices(LOG_LEVELS))
    .addOption(
      new Option('--log-format <format>', 'replace log.format (default auto: pretty on a terminal)').choices([
        'auto',
        'pretty',
        'json',
      ]),
    )
    .option('--no-watch', 'do not reload when the config file changes (SIGHUP and POST /reload still do)')
    .option(
      '--pid-file <path>',
      'write the pid here once listening, remove it at exit; refuse if it names a live process',
    )
    .action(async (o: StartFlags) => {
      await runStart(
        o.config,
        {
          ...(o.panel !== undefined ? { panel: o.panel } : {}),
          ...(o.workers !== undefined ? { workers: o.workers } : {}),
          ...(o.listen.length > 0 ? { listen: o.listen } : {}),
          ...(o.logLevel !== undefined ? { logLevel: o.logLevel } : {}),
          ...(o.logFormat !== undefined ? { logFormat: o.logFormat } : {}),
        },
        { watch: o.watch, ...(o.pidFile !== undefined ? { pidFile: o.pidFile } : {}) },
      );
    });
  p.command('check')
    .description('validate a config and print every error')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG)
    .action(async (o: { config: string }) => {
      process.exitCode = await runCheck(o.config);
    });
  addRouteCommand(p, DEFAULT_CONFIG);
  p.command('import-bfe')
    .description("print a BFE conf directory's routing as Switchboard YAML")
    .argument('<dir>', 'BFE conf directory (host_rule.data, route_rule.data, cluster_conf.data, ...)')
    .action(async (dir: string) => {
      process.exitCode = await runImportBfe(dir);
    });
  addDbCommands(p);
  addEtcdCommands(p);
  p.command('schema')
    .description('print the JSON Schema of the config, plugin options included (docs/config-schema.md)')
    .action(async () => {
      process.exitCode = await runSchema();
    });
  addHelp(p);
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
