/**
 * `switchboard route`: explain the routing decision for one request without sending traffic.
 * With `--admin URL` it asks the running router (`POST /explain`, app/explain/ask-admin.ts),
 * which answers on its live backend state: health, drain/disable, weight overrides, slow start.
 * Without, it loads the config, starts its address book and operator (app/explain-config.ts),
 * assumes every backend healthy at its configured weight (and says so), and prints
 * `app/explain/explain.ts`'s one explanation (text, or the same object as `--json`) for every
 * book: the request as the data
 * plane sees it (Host port split off, path normalised by the listener), product, rule with its
 * config path, cluster, sub-clusters and backends, the backend attempt 1 picks, or why nothing
 * matched, then the `policies:` rules the request and `--client` would meet (evaluated without
 * side effects, app/explain/policies.ts). Exit codes: 0 routed, 1 no route (or the operator
 * refused), 2 usage, 3 invalid config, 4 the admin did not answer usably (unreachable, token
 * refused, not an admin listener); a policy that would fire does not change them.
 */
import type { Command } from 'commander';
import { reportError } from '../app/exit.ts';
import { askAdmin } from '../app/explain/ask-admin.ts';
import { ExplainInputError, explainRoute } from '../app/explain/explain.ts';
import { formatRouteExplanation } from '../app/explain/format.ts';
import { openPolicies } from '../app/explain/policies.ts';
import { type OpenedConfig, openConfig } from '../app/explain-config.ts';
import type { PolicySet } from '../src/policy/index.ts';

/** Exit codes of `switchboard route`. */
export const ROUTE_EXIT = { routed: 0, noRoute: 1, usage: 2, config: 3, admin: 4 } as const;

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
  /** The running router's admin listener: ask it (live state) instead of loading `config`. */
  readonly admin?: string | undefined;
  /** The admin token (default: env SWITCHBOARD_ADMIN_TOKEN). */
  readonly token?: string | undefined;
}

const asJson = (v: unknown): string => `${JSON.stringify(v, (_k, x: unknown) => (x === undefined ? null : x), 2)}\n`;

/** `--admin`: the running router explains on its live state. Returns the exit code. */
async function runRemote(o: RouteOptions & { admin: string }): Promise<number> {
  const token = o.token ?? process.env.SWITCHBOARD_ADMIN_TOKEN;
  const answer = await askAdmin(o.admin, token, {
    host: o.host,
    path: o.path,
    method: o.method,
    headers: o.header,
    client: o.client,
    sni: o.sni,
    alpn: o.alpn,
    vip: o.vip,
    listener: o.listener,
  });
  if (answer.kind !== 'answer') {
    process.stderr.write(`route: ${answer.message}\n`);
    return answer.kind === 'usage' ? ROUTE_EXIT.usage : ROUTE_EXIT.admin;
  }
  process.stdout.write(o.json ? asJson(answer.explanation) : answer.text);
  return answer.exitCode;
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
    if (o.admin !== undefined) return await runRemote({ ...o, admin: o.admin });
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
    process.stdout.write(o.json ? asJson(e) : formatRouteExplanation(e));
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
  $ switchboard route --admin 127.0.0.1:9901 --host www.example.test   # the running router, live

The request is built as the data plane builds it: the Host port is split off, the path is
normalised with the listener's pathNormalization, and on a clientIpFrom: header listener a
forwarded header from a trusted --client names the client. "chosen" is the backend the operator
picks for the first attempt.

Backend state: without --admin the answer is offline: the config's book and operator, every
backend assumed healthy at its configured weight (the "assumed:" line says so). With --admin
URL the running router answers (POST /explain; --config is not read) on its live state: health
(passive and active checks), drain and disable (local and fleet scope), weight overrides, slow
start. Each backend says "takes traffic" or "skipped: <why>" (drained, disabled, unhealthy,
weight 0; with who set it and when), and a "note:" line gives the all-healthy answer when it
differs. The token is --token, else SWITCHBOARD_ADMIN_TOKEN. "chosen" is one pick of a fresh
operator (round robin from its first step); real traffic spreads over every backend that
takes traffic.

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
  4  --admin: no usable answer (unreachable, no answer within 10 s, token refused, not an
     admin listener): one line naming the URL

Environment:
  SWITCHBOARD_ADMIN_TOKEN   the admin token for --admin when --token is not given
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
    .option('--admin <url>', "ask the running router's admin listener (live backend state) instead of --config")
    .option('--token <token>', 'the admin token for --admin (default: env SWITCHBOARD_ADMIN_TOKEN)')
    .addHelpText('after', HELP)
    .exitOverride((err) => {
      process.exit(err.exitCode === 0 ? 0 : ROUTE_EXIT.usage);
    })
    .action(async (o: RouteOptions) => {
      process.exitCode = await runRoute(o);
    });
}
