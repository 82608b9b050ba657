/**
 * `switchboard route`: explain the routing decision for one request without sending traffic.
 * Loads the config, starts its address book and operator (app/explain-config.ts), and prints
 * `app/explain/explain.ts`'s one explanation (text, or the same object as `--json`) for every
 * book: the request as the data
 * plane sees it (Host port split off, path normalised by the listener), product, rule with its
 * config path, cluster, sub-clusters and backends, the backend attempt 1 picks, or why nothing
 * matched, then the `policies:` rules the request and `--client` would meet (evaluated without
 * side effects, app/explain/policies.ts). Exit codes: 0 routed, 1 no route (or the operator
 * refused), 2 usage, 3 invalid config; a policy that would fire does not change them.
 */
import type { Command } from 'commander';
import { reportError } from '../app/exit.ts';
import { ExplainInputError, explainRoute, formatRouteExplanation } from '../app/explain/explain.ts';
import { openPolicies } from '../app/explain/policies.ts';
import { type OpenedConfig, openConfig } from '../app/explain-config.ts';
import type { PolicySet } from '../src/policy/index.ts';

/** Exit codes of `switchboard route`. */
export const ROUTE_EXIT = { routed: 0, noRoute: 1, usage: 2, config: 3 } as const;

export interface RouteOptions {
  readonly config: string;
  readonly host?: string | undefined;
  readonly path: string;
  readonly method: string;
  readonly header: readonly string[];
  readonly client: string;
  readonly vip?: string | undefined;
  readonly sni?: string | undefined;
  readonly alpn?: string | undefined;
  readonly json?: boolean | undefined;
  /** The listener whose `pathNormalization` and client addressing apply (default: the first). */
  readonly listener?: string | undefined;
}

function parseHeaders(list: readonly string[]): [string, string][] {
  return list.map((h) => {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new ExplainInputError(`--header ${JSON.stringify(h)}: expected NAME:VALUE`);
    return [h.slice(0, colon).trim(), h.slice(colon + 1).trim()];
  });
}

/** Returns the exit code (ROUTE_EXIT). */
export async function runRoute(o: RouteOptions): Promise<number> {
  let opened: OpenedConfig | undefined;
  let policies: PolicySet | undefined;
  try {
    const headers = parseHeaders(o.header);
    if (o.host === undefined && o.sni === undefined) throw new ExplainInputError('give --host, --sni or both');
    opened = await openConfig(o.config);
    policies = await openPolicies(opened.loaded);
    const e = explainRoute(
      { book: opened.book, operator: opened.operator, listeners: opened.loaded.config.listeners, policies },
      {
        host: o.host,
        path: o.path,
        method: o.method,
        headers,
        clientIp: o.client,
        sni: o.sni,
        alpn: o.alpn?.split(',').map((s) => s.trim()),
        vip: o.vip,
        listener: o.listener,
      },
    );
    process.stdout.write(
      o.json
        ? `${JSON.stringify(e, (_k, v: unknown) => (v === undefined ? null : v), 2)}\n`
        : formatRouteExplanation(e),
    );
    return e.routed ? ROUTE_EXIT.routed : ROUTE_EXIT.noRoute;
  } catch (e) {
    if (e instanceof ExplainInputError) {
      process.stderr.write(`route: ${e.message}\n`);
      return ROUTE_EXIT.usage;
    }
    // Config problems print as `check` prints them (app/exit.ts): one line each, exit 3.
    return reportError(e);
  } finally {
    await policies?.close();
    await opened?.close();
  }
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

const HELP = `
Examples:
  $ switchboard route --host www.example.test --path /static/app.css
  $ switchboard route --host www.example.test:8080 --client 203.0.113.9 --json
  $ switchboard route --sni secure.example.test          # TLS passthrough: routed by SNI
  $ switchboard route --host shop.example.test --header 'X-Canary: 1'

The request is built as the data plane builds it: the Host port is split off, the path is
normalised with the listener's pathNormalization, and on a clientIpFrom: header listener a
forwarded header from a trusted --client names the client. "chosen" is the backend the operator
picks for the first attempt (all backends assumed healthy).

Then one "policy:" line per policies: rule the request would meet, in order: "fires" with
close or the answer (status, Location), "applies" for a counting rule (rate-limit, in-flight:
it fires only over its limit, which depends on traffic), "passes" when the rule selects the
request but lets it through. Nothing is counted: no token or slot is taken. At the connection
and handshake points the client is --client (the connection's), not a forwarded header's.

Exit codes:
  0  routed
  1  no route (or the operator refused: blackhole, no backend)
  2  usage error (bad flag, bad --host/--path/--header, unknown --listener)
  3  invalid config (unreadable file, schema, plugin or address-book error)

Environment:
  none: the config file and the flags are the only input.
`;

/** Adds `route` to the program. Commander's own usage errors exit 2 here too. */
export function addRouteCommand(p: Command, defaultConfig: string): void {
  p.command('route')
    .description('explain the routing decision for a request, without sending traffic')
    .option('-c, --config <file>', 'config file', defaultConfig)
    .option('--host <host>', 'Host header, port allowed (www.example.test:8080)')
    .option('--path <path>', 'request target (path and query)', '/')
    .option('--method <method>', 'request method', 'GET')
    .option('--header <k:v>', 'a request header (repeatable)', collect, [])
    .option('--client <ip>', 'client (connection) IP', '127.0.0.1')
    .option('--vip <ip>', 'VIP (PROXY destination)')
    .option('--sni <name>', 'TLS SNI: alone, TLS passthrough routing; with --host, HTTP over terminated TLS')
    .option('--alpn <list>', 'comma-separated ALPN protocols offered')
    .option(
      '--listener <name>',
      'the listener whose pathNormalization and client addressing apply (default: the first)',
    )
    .option('--json', 'print the explanation as JSON (the same object for every address book)')
    .addHelpText('after', HELP)
    .exitOverride((err) => {
      process.exit(err.exitCode === 0 ? 0 : ROUTE_EXIT.usage);
    })
    .action(async (o: RouteOptions) => {
      process.exitCode = await runRoute(o);
    });
}
