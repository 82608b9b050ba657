/**
 * What `--help` adds after commander's option list for each command: examples, signals, exit
 * codes and environment variables (docs/operations.md "Commands"). Kept as data beside the commands so
 * a new flag and its help change together; `addHelp` attaches them by command name.
 */
import type { Command } from 'commander';

const EXIT_CODES = `Exit codes:
  0  ok
  1  runtime failure (a port in use, a peer or database unreachable, a crash)
  2  usage error (unknown command or option, bad option value: --panel foo, --listen localhost)
  3  invalid config (the file or what it points at)`;

const ENV_COMMON = `  SWITCHBOARD_DEBUG=1       print the stack of an unexpected error (also --verbose)
  NODE_OPTIONS              flags for Node itself, e.g. --max-old-space-size=1024`;

/** Help text after the options, by command name ('' = the program itself). */
export const HELP: Readonly<Record<string, string>> = {
  '': `
Examples:
  $ switchboard check -c conf/switchboard.yaml
  $ switchboard start -c conf/switchboard.yaml
  $ switchboard route --host www.example.test --path /static/app.css
  $ switchboard help start

Node >= 22.18 runs the TypeScript sources directly (on an older Node: . scripts/use-node.sh).
Deployment (Dockerfile, systemd unit, production config): examples/deploy/.
`,
  start: `
Examples:
  $ switchboard start                                   # conf/switchboard.yaml
  $ switchboard start -c /etc/switchboard/switchboard.yaml --panel worker --workers 4
  $ switchboard start -c my.yaml --listen 0.0.0.0:8080  # one plaintext listener instead of the file's
  $ switchboard start --no-watch --pid-file /run/switchboard.pid   # reloads by SIGHUP only

Signals:
  HUP         reload the config (also: POST /reload on the admin API, and the file is
              watched unless --no-watch)
  USR1        reopen the access-log file (after logrotate moved it)
  TERM, INT   graceful stop: /readyz fails, listeners close, open connections finish within
              limits.drainTimeout, then exit 0; a second signal exits at once (1), bar the
              same signal again within 1 s (npm passes on the Ctrl-C the router got too)

Wrappers: under npm start or npx, or a Node parent's IPC channel, the router stops as on TERM
when that wrapper exits (npx runs it under sh -c, which does not pass signals on; kill npx with
TERM, or INT the whole process group as Ctrl-C does). Run from a shell, systemd or a container,
it outlives its parent. --pid-file is written once every listener is bound and removed at exit;
a file that names a running process refuses the start (exit 1).

${EXIT_CODES}

Environment:
  SWITCHBOARD_ADMIN_TOKEN   the admin API's bearer token when admin.token is "" (read per request)
  NO_COLOR                  no colours in pretty logs on a terminal
${ENV_COMMON}

Open files: each client connection needs 2 + limits.maxIdleUpstreamsPerConnection descriptors;
a limits.maxConnections that the nofile limit (ulimit -n, LimitNOFILE=) cannot hold is a config
error at start. Run it as PID 1 directly (node bin/switchboard.js start), not through npm.
`,
  check: `
Validates the config as start would load it (schema, plugins and their options, TLS files, a
dry load of the address book) and prints every problem, one per line, with its config path.

Examples:
  $ switchboard check -c /etc/switchboard/switchboard.yaml && systemctl reload switchboard

Exit codes:
  0  valid
  2  usage error
  3  invalid config

Environment:
${ENV_COMMON}
`,
  db: `
Examples:
  $ switchboard db init --db routes.db
  $ switchboard db import --db routes.db conf/switchboard.yaml
  $ switchboard db export --db routes.db > routes.yaml

${EXIT_CODES}
`,
  etcd: `
Examples:
  $ switchboard etcd import --endpoints http://127.0.0.1:2379 conf/switchboard.yaml
  $ switchboard etcd export --endpoints http://127.0.0.1:2379 --prefix /switchboard/

${EXIT_CODES}
`,
  'import-bfe': `
Examples:
  $ switchboard import-bfe /etc/bfe/conf > routes.yaml   # then addressBook: { name: bfe, routes: routes.yaml }

${EXIT_CODES}
`,
};

/** Attaches `HELP` to the program and its commands (by name; unknown names are ignored). */
export function addHelp(program: Command): void {
  const text = HELP[''];
  if (text !== undefined) program.addHelpText('after', text);
  for (const c of program.commands) {
    const t = HELP[c.name()];
    if (t !== undefined) c.addHelpText('after', t);
  }
}
