/**
 * A real PostgreSQL for tests: Debian's server binaries (`apt-get install postgresql`) on a free
 * loopback port with a temporary cluster (initdb, trust auth). initdb and postgres refuse to run
 * as root, so as root they run as the `postgres` user via runuser. Tests skip when the binaries
 * are missing (`postgresBin()` is undefined).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './etcd.ts';
import { eventually } from './router.ts';

/** The directory holding initdb and postgres (newest version), or undefined. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((d) => existsSync(join(d, 'postgres')));
}

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`. */
  readonly url: string;
  close(): Promise<void>;
}

function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

async function accepts(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/** Initialises a cluster in a temp dir and starts postgres on a free loopback port. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin();
  if (bin === undefined) throw new Error('postgresql is not installed (apt-get install postgresql)');
  const dir = await mkdtemp(join(tmpdir(), 'swb-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const [initCmd, initArgs] = asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const port = await freePort();
  const [cmd, args] = asPostgres(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
  ]);
  const child: ChildProcess = spawn(cmd, args, { stdio: 'ignore' });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`postgres exited ${child.exitCode}`);
      return accepts(url);
    },
    30_000,
    'postgres to accept connections',
  );
  return {
    url,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        // runuser does not forward signals: pg_ctl stops the postmaster itself (fast mode).
        const [stopCmd, stopArgs] = asPostgres(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'fast', '-w']);
        execFileSync(stopCmd, stopArgs, { stdio: 'ignore' });
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
