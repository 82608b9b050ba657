/**
 * A fleet you can run here (issue 43 item 5): etcd, Redis, pebble with pebble-challtestsrv,
 * two backends, three routers and HAProxy in front, on loopback, with one command:
 *
 *   node examples/fleet/run.ts [--dir DIR] [--free-ports]   # start; Ctrl-C stops everything
 *   node examples/fleet/run.ts --stop [--dir DIR]            # stop a run from another shell
 *
 *   curl ──► HAProxy :8080 / :8443 (mode tcp, send-proxy-v2, roundrobin)
 *              ├──► router-1 :18081 / :18441   admin :19901 ┐
 *              ├──► router-2 :18082 / :18442   admin :19902 ├──► app-a :19001, app-b :19002
 *              └──► router-3 :18083 / :18443   admin :19903 ┘
 *            etcd :12379 (membership, certificates, backend state)   Redis :16379 (limits)
 *            pebble :14000 ──validates──► HAProxy (challtestsrv DNS: every name is 127.0.0.1)
 *
 * 1. The configs of this folder are copied into DIR (default: $TMPDIR/switchboard-fleet), their
 *    ports remapped with --free-ports; a fleet key and pebble's HTTPS certificate are made there.
 * 2. The parts start in order (parts.ts), each once the previous serves; HAProxy before the
 *    routers, so pebble's validation, which goes through it, finds a router from the first order.
 * 3. Ready when every router lists three members and the certificate, verified against pebble's
 *    root, is served through HAProxy; then DIR/state.json says `ready: true` and the commands
 *    to try are printed.
 * 4. SIGINT or SIGTERM (Ctrl-C, or `--stop`, which signals this process) stops the parts in
 *    order: HAProxy, the routers (their leases revoked), pebble, DNS, Redis, etcd.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SwitchboardError } from '../../src/base/errors.ts';
import { startBackends } from './backends.ts';
import { BINARIES, startDns, startEtcd, startHaproxy, startPebble, startRedis, startRouter } from './parts.ts';
import { choosePorts, type Ports, remap } from './ports.ts';
import { httpGet, httpsText, verifiedFingerprint } from './probes.ts';
import { alive, type Part, readState, removeState, stopPid, waitUntil, writeState } from './processes.ts';

const NAME = 'fleet.example.test';
const FOLDER = new URL('.', import.meta.url);
const CONFIGS = ['router-1.yaml', 'router-2.yaml', 'router-3.yaml', 'haproxy.cfg', 'pebble.json'];

/** A self-signed certificate for pebble's own HTTPS (the routers' `acme.ca`). */
// biome-ignore format: a flag and its value on one line
const OPENSSL_ARGS = [
  'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30',
  '-subj', '/CN=pebble', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  '-keyout', 'pebble-https.key', '-out', 'pebble-https.pem',
];

/** Step 1: the run directory with the remapped configs, the fleet key and pebble's certificate. */
async function prepare(dir: string, ports: Ports): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const f of CONFIGS) await writeFile(join(dir, f), remap(await readFile(new URL(f, FOLDER), 'utf8'), ports));
  await writeFile(join(dir, 'fleet.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  execFileSync(BINARIES.openssl, OPENSSL_ARGS, { cwd: dir, stdio: 'ignore' });
  return readFile(join(dir, 'pebble-https.pem'), 'utf8');
}

/** Steps 2 and 3; `parts` grows as each starts (so a failure stops what did). */
async function start(
  dir: string,
  ports: Ports,
  parts: Part[],
  record: (ready: boolean) => Promise<void>,
  stopping: () => boolean,
) {
  const ca = await prepare(dir, ports);
  const add = async (p: Promise<Part>) => {
    const part = await p;
    parts.push(part);
    await record(false);
    if (stopping()) throw new SwitchboardError('SWB_ERR_FLEET', 'stopped while starting');
  };
  await add(startEtcd(dir, ports));
  await add(startRedis(dir, ports));
  await add(startDns(dir, ports));
  await add(startPebble(dir, ports, ca));
  const root = await httpsText(`https://127.0.0.1:${ports.pebbleManagement}/roots/0`, ca);
  if (root === undefined) throw new SwitchboardError('SWB_ERR_FLEET', 'pebble: no root certificate at /roots/0');
  await writeFile(join(dir, 'pebble-root.pem'), root);
  await add(startHaproxy(dir, ports));
  const admins = [ports.admin1, ports.admin2, ports.admin3];
  for (const [i, admin] of admins.entries()) await add(startRouter(dir, i + 1, admin));
  for (const admin of admins)
    await waitUntil(undefined, 'three fleet members', async () => {
      const r = await httpGet(admin, '/fleet');
      return r?.status === 200 && (JSON.parse(r.body) as { members: unknown[] }).members.length === 3;
    });
  await waitUntil(
    undefined,
    'a request through HAProxy',
    async () => (await httpGet(ports.haproxyHttp, '/', { host: NAME }))?.status === 200,
  );
  await waitUntil(
    undefined,
    `the certificate for ${NAME} through HAProxy`,
    async () => (await verifiedFingerprint(ports.haproxyTls, NAME, root)) !== undefined,
    120_000,
  );
  await record(true);
}

function howTo(dir: string, p: Ports): string {
  const A = (n: 1 | 2 | 3) => `127.0.0.1:${p[`admin${n}`]}`;
  return `
The fleet is up (files and logs in ${dir}).
  HAProxy      http 127.0.0.1:${p.haproxyHttp}  https 127.0.0.1:${p.haproxyTls}  stats http://127.0.0.1:${p.haproxyStats}/
  routers      admin ${A(1)}, ${A(2)}, ${A(3)}
  backends     app-a 127.0.0.1:${p.backendA}, app-b 127.0.0.1:${p.backendB}
  etcd         http://127.0.0.1:${p.etcd}  (prefix /switchboard/example/)   Redis redis://127.0.0.1:${p.redis}
  pebble       https://127.0.0.1:${p.pebble}/dir   root: ${join(dir, 'pebble-root.pem')}

Try:
  curl -s -H 'Host: ${NAME}' http://127.0.0.1:${p.haproxyHttp}/
  curl -s --cacert ${join(dir, 'pebble-root.pem')} --resolve ${NAME}:${p.haproxyTls}:127.0.0.1 https://${NAME}:${p.haproxyTls}/
  curl -s http://${A(2)}/fleet
  curl -s --parallel --parallel-immediate --parallel-max 100 -o /dev/null -w '%{http_code}\\n' -H 'Host: ${NAME}' 'http://127.0.0.1:${p.haproxyHttp}/api/[1-100]' 2>/dev/null | sort | uniq -c
  curl -s -X POST -H 'Content-Type: application/json' "http://${A(1)}/backends/127.0.0.1:${p.backendA}/drain?scope=fleet"
  curl -s http://${A(3)}/backends
  curl -s -X POST -H 'Content-Type: application/json' "http://${A(1)}/backends/127.0.0.1:${p.backendA}/enable?scope=fleet"
Stop: Ctrl-C here, or node examples/fleet/run.ts --stop --dir ${dir}
`;
}

/** Step 4, from this process: the parts in reverse order of need. */
async function shutdown(parts: readonly Part[], closeBackends: () => Promise<void>): Promise<void> {
  const order = ['haproxy', 'router-1', 'router-2', 'router-3', 'pebble', 'challtestsrv', 'redis', 'etcd'];
  const byOrder = [...parts].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  for (const part of byOrder) if (part.child.pid !== undefined) await stopPid(part.child.pid, part.signal);
  // A part that started while the others stopped (a signal during the start).
  for (const part of parts) if (part.child.pid !== undefined) await stopPid(part.child.pid, 'SIGKILL');
  await closeBackends();
}

/** `--stop`: signal the run's supervisor, then make sure every part it recorded is gone. */
async function stop(dir: string): Promise<void> {
  const state = await readState(dir);
  if (state === undefined) {
    process.stdout.write(`no fleet recorded in ${dir}\n`);
    return;
  }
  await stopPid(state.supervisor, 'SIGTERM', 30_000);
  for (const part of state.parts) await stopPid(part.pid, 'SIGKILL');
  await removeState(dir);
  process.stdout.write(`stopped: ${state.parts.map((p) => `${p.name} (${p.pid})`).join(', ')}\n`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { dir: { type: 'string' }, stop: { type: 'boolean' }, 'free-ports': { type: 'boolean' } },
  });
  const dir = resolve(values.dir ?? join(tmpdir(), 'switchboard-fleet'));
  if (values.stop === true) {
    await stop(dir);
    return 0;
  }
  const missing = Object.values(BINARIES).filter((b) => !existsSync(b));
  if (missing.length > 0)
    throw new SwitchboardError('SWB_ERR_USAGE', `missing ${missing.join(', ')} (see examples/fleet/README.md)`);
  const earlier = await readState(dir);
  if (earlier !== undefined && alive(earlier.supervisor))
    throw new SwitchboardError(
      'SWB_ERR_USAGE',
      `a fleet already runs in ${dir} (pid ${earlier.supervisor}): --stop it first`,
    );
  const ports = await choosePorts(values['free-ports'] === true);
  const parts: Part[] = [];
  const record = (ready: boolean) =>
    writeState(dir, {
      supervisor: process.pid,
      ready,
      parts: parts.flatMap((p) => (p.child.pid === undefined ? [] : [{ name: p.name, pid: p.child.pid }])),
      ports,
    });
  await mkdir(dir, { recursive: true });
  await record(false);
  const closeBackends = await startBackends([
    { name: 'app-a', port: ports.backendA },
    { name: 'app-b', port: ports.backendB },
  ]);
  let stopping: Promise<void> | undefined;
  const finish = () => {
    stopping ??= shutdown(parts, closeBackends).then(() => removeState(dir));
    return stopping;
  };
  const code = new Promise<number>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.on(signal, () => {
        process.stdout.write(`\n${signal}: stopping the fleet\n`);
        void finish().then(() => resolve(0));
      });
  });
  try {
    await start(dir, ports, parts, record, () => stopping !== undefined);
  } catch (e) {
    process.stderr.write(`fleet example: ${(e as Error).message}\n`);
    await finish();
    return 1;
  }
  if (stopping !== undefined) return code;
  for (const part of parts)
    part.child.once('exit', (c, s) => {
      if (stopping === undefined) process.stdout.write(`${part.name} exited (${s ?? c}); see ${part.name}.log\n`);
    });
  process.stdout.write(howTo(dir, ports));
  return code;
}

process.exitCode = await main().catch((e: unknown) => {
  process.stderr.write(`fleet example: ${(e as Error).message}\n`);
  return 1;
});
