/**
 * examples/fleet end to end (issue 43 item 5): `node examples/fleet/run.ts --free-ports --dir D`
 * in a child process, as a user runs it, then through its HAProxy:
 * - a request is served (by app-a or app-b);
 * - GET /fleet on each router lists the three members;
 * - pebble issued one certificate, served through HAProxy and by each router (a handshake
 *   verified against pebble's root; each router reached with a PROXY v2 header of our own);
 * - a fleet drain on one router: within 1 s every router has it, and no request through
 *   HAProxy reaches the drained backend;
 * - `--stop` leaves no process behind (every recorded pid gone, `pgrep -f D` finds nothing).
 * Skipped when a binary the example needs is missing.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProxyV2 } from '../../src/proxy-protocol/index.ts';
import { burst, most } from '../harness/fleet-burst.ts';
import { httpGet } from '../harness/http.ts';
import { eventually } from '../harness/router.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'examples/fleet/run.ts');
const NAME = 'fleet.example.test';
const BINARIES = [
  '/usr/bin/etcd',
  '/usr/bin/redis-server',
  '/usr/bin/pebble',
  '/usr/bin/pebble-challtestsrv',
  process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy',
  '/usr/bin/openssl',
];

interface State {
  readonly supervisor: number;
  readonly ready: boolean;
  readonly parts: readonly { readonly name: string; readonly pid: number }[];
  readonly ports: Record<string, number>;
}

/** True while `pid` runs (a zombie counts as gone). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
};

/** Runs `node run.ts args` to its end (asynchronously: the test's event loop keeps reaping run.ts). */
function runScript(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The admin API of a router (loopback: no token; the Host check wants a loopback name). */
const adminGet = (port: number, path: string) => httpGet(port, path, { host: '127.0.0.1' });

/** A GET through a fresh connection to `port` with Host NAME: status and body. */
const get = (port: number, path = '/') => httpGet(port, path, { host: NAME });

/**
 * The SHA-256 fingerprint of a handshake for NAME verified against `ca` (without: Node's own
 * roots), or undefined; `preface` goes first.
 */
function fingerprint(port: number, ca: string | undefined, preface?: Buffer): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = netConnect({ port, host: '127.0.0.1' }, () => {
      if (preface !== undefined) socket.write(preface);
      const tls = tlsConnect({ socket, servername: NAME, ...(ca !== undefined ? { ca } : {}) }, () => {
        const raw = tls.getPeerX509Certificate()?.raw;
        resolve(tls.authorized && raw !== undefined ? new X509Certificate(raw).fingerprint256 : undefined);
        tls.destroy();
      });
      tls.on('error', () => resolve(undefined));
    });
    socket.on('error', () => resolve(undefined));
    socket.setTimeout(5000, () => socket.destroy());
  });
}

const proxyHeader = (port: number) =>
  encodeProxyV2({
    command: 'proxy',
    source: { ip: '127.0.0.1', port: 40000 },
    destination: { ip: '127.0.0.1', port },
  });

describe.skipIf(BINARIES.some((b) => !existsSync(b)))('examples/fleet end to end', () => {
  let dir: string;
  let child: ChildProcess;
  let output = '';
  let state: State;
  const stateOf = async (): Promise<State | undefined> => {
    try {
      return JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as State;
    } catch {
      return undefined;
    }
  };
  const admin = (n: number) => state.ports[`admin${n}`] as number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swb-fleet-example-'));
    child = spawn(process.execPath, [RUN, '--free-ports', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`run.ts exited ${child.exitCode}: ${output}`);
        const s = await stateOf();
        if (s?.ready !== true) return false;
        state = s;
        return true;
      },
      180_000,
      'the example fleet ready',
    );
  }, 200_000);

  afterAll(async () => {
    // Whatever a failed test left: --stop, then every recorded pid and run.ts itself.
    const left = await stateOf();
    if (left !== undefined) await runScript(['--stop', '--dir', dir]);
    for (const pid of [...(left?.parts ?? []).map((p) => p.pid), child?.pid ?? 0])
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  it('prints where everything is and how to try it', () => {
    expect(output).toContain('The fleet is up');
    expect(output).toContain(`http://127.0.0.1:${state.ports.haproxyHttp}/`);
    expect(output).toContain('drain?scope=fleet');
    expect(output).toContain('--stop');
  });

  it('a request through HAProxy is served; GET /fleet on each router lists the three members', async () => {
    const r = await get(state.ports.haproxyHttp as number);
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/^app-[ab] GET \/$/m);
    for (const n of [1, 2, 3]) {
      const fleet = JSON.parse((await adminGet(admin(n), '/fleet')).body) as {
        id: string;
        members: { id: string; self: boolean }[];
      };
      expect(fleet.id).toBe(`router-${n}`);
      expect(fleet.members.map((m) => m.id).sort()).toEqual(['router-1', 'router-2', 'router-3']);
      expect(fleet.members.find((m) => m.self)?.id).toBe(`router-${n}`);
    }
  });

  it('one certificate, issued once, served through HAProxy and by each of the three routers', async () => {
    const log = await readFile(join(dir, 'pebble.log'), 'utf8');
    expect(log.match(/Issued certificate serial/g)?.length).toBe(1);
    const root = await readFile(join(dir, 'pebble-root.pem'), 'utf8');
    const front = await fingerprint(state.ports.haproxyTls as number, root);
    expect(front).toBeDefined();
    for (const n of [1, 2, 3]) {
      const port = state.ports[`tls${n}`] as number;
      expect(await fingerprint(port, root, proxyHeader(port)), `router-${n}`).toBe(front);
    }
    // Not trusted without pebble's root: the check above can fail.
    expect(await fingerprint(state.ports.haproxyTls as number, undefined)).toBeUndefined();
  });

  it('a fleet drain through one router: within 1 s no request through HAProxy reaches that backend', async () => {
    const drained = `127.0.0.1:${state.ports.backendA}`;
    const seen = async (n: number) => {
      const names: string[] = [];
      for (let i = 0; i < n; i++) names.push((await get(state.ports.haproxyHttp as number)).body.slice(0, 5));
      return names;
    };
    // Before: both backends serve (round robin over three routers, each balancing over two).
    expect(new Set(await seen(12))).toEqual(new Set(['app-a', 'app-b']));
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${admin(1)}/backends/${drained}/drain?scope=fleet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    const mode = async (n: number) => {
      const body = JSON.parse((await adminGet(admin(n), '/backends')).body) as {
        backends: { id: string; mode: string; modeScope: string | null }[];
      };
      return body.backends.find((b) => b.id === drained);
    };
    await eventually(
      async () => (await Promise.all([1, 2, 3].map(mode))).every((b) => b?.mode === 'draining'),
      Math.max(0, 1000 - (performance.now() - t0)),
      'every router draining within 1 s',
    );
    expect((await mode(3))?.modeScope).toBe('fleet');
    expect(new Set(await seen(30))).toEqual(new Set(['app-b']));
  });

  it('the /api rate limit (20/s burst 20 per client, scope: fleet): 100 at once through HAProxy pass about 20', async () => {
    const head = `GET /api/x HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`;
    const b = await burst([state.ports.haproxyHttp as number], 100, undefined, head);
    const passed = b.statuses.get(200) ?? 0;
    console.log(`example /api: ${passed} of 100 passed (at most ${most(b)})`);
    expect(b.statuses.get(429)).toBe(100 - passed);
    // Three routers counting alone would pass up to 60.
    expect(passed).toBeGreaterThanOrEqual(15);
    expect(passed).toBeLessThanOrEqual(most(b));
  });

  it('a router killed: HAProxy sends its connections to the others, and it leaves the member list', async () => {
    const r3 = state.parts.find((p) => p.name === 'router-3')!.pid;
    process.kill(r3, 'SIGKILL');
    await eventually(() => !alive(r3), 5000, 'router-3 gone');
    // HAProxy (no health checks) learns of the dead router from failed connects; a connection it
    // had already handed to router-3 as it died can hang up (seen once in CI), so the claim is
    // that nine requests in a row are then served by the others.
    await eventually(
      async () => {
        for (let i = 0; i < 9; i++) {
          const answer = await get(state.ports.haproxyHttp as number).catch(() => undefined);
          if (answer?.status !== 200) return false;
        }
        return true;
      },
      10_000,
      'nine requests in a row served through HAProxy without router-3',
    );
    await eventually(
      async () => {
        const fleet = JSON.parse((await adminGet(admin(1), '/fleet')).body) as { members: { id: string }[] };
        return fleet.members.map((m) => m.id).join() === 'router-1,router-2';
      },
      10_000,
      'router-3 out of the member list after its lease (3 s)',
    );
  });

  it('--stop leaves no process behind', async () => {
    const pids = [...state.parts.filter((p) => p.name !== 'router-3').map((p) => p.pid), state.supervisor];
    expect(pids.every(alive)).toBe(true);
    const exited = new Promise((r) => child.once('exit', r));
    const stop = await runScript(['--stop', '--dir', dir]);
    expect(stop.status, stop.stderr).toBe(0);
    expect(stop.stdout).toContain('stopped:');
    await exited;
    expect(child.exitCode).toBe(0);
    expect([...pids, ...state.parts.map((p) => p.pid)].filter(alive)).toEqual([]);
    const pgrep = spawnSync('pgrep', ['-f', dir], { encoding: 'utf8' });
    expect(pgrep.stdout).toBe('');
    expect(existsSync(join(dir, 'state.json'))).toBe(false);
  }, 90_000);
});
