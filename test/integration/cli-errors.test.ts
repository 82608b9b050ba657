/**
 * Issue 19 item 1: ordinary mistakes through the real CLI end in one clear line per problem (with
 * its config path) and a documented exit code (app/exit.ts), never a stack trace.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, STACK } from '../harness/cli-run.ts';

let dir: string;
const held: Server[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swb-cli-errors-'));
});
afterAll(async () => {
  for (const s of held) s.close();
  await rm(dir, { recursive: true, force: true });
});

const BOOK = `addressBook:
  name: bfe
  products: { web: { hosts: [www.example.test], rules: [{ cond: "default_t()", cluster: web }] } }
  clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: 127.0.0.1:9 }] } } } }
`;

async function config(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

/** A port something else listens on. */
async function busyPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  held.push(s);
  return (s.address() as { port: number }).port;
}

function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(STACK);
}

describe('switchboard check and start: one line, a config path, an exit code', () => {
  it('panel: htpp2 — check says it is wrong (did you mean http2), start refuses the same way; exit 3', async () => {
    const file = await config('htpp2.yaml', `panel: htpp2\nlisteners: [{ name: web, address: 127.0.0.1:0 }]\n${BOOK}`);
    for (const cmd of ['check', 'start']) {
      const r = await runCli([cmd, '--config', file]);
      expect(r.code).toBe(3);
      expect(r.messages).toEqual([
        'panel.name: unknown panel "htpp2" (did you mean "http2"?); known: net, http2, worker',
      ]);
      expectNoStack(r.stderr);
    }
  });

  it('--panel foo: a bad option value, one line naming the option; exit 2 (usage)', async () => {
    const file = await config('ok.yaml', `listeners: [{ name: web, address: 127.0.0.1:0 }]\n${BOOK}`);
    const r = await runCli(['start', '--config', file, '--panel', 'foo']);
    expect(r.code).toBe(2);
    expect(r.messages).toEqual([
      `error: option '--panel <name>' argument 'foo' is invalid. unknown panel "foo"; known: net, http2, worker`,
    ]);
    expectNoStack(r.stderr);
  });

  it('a file book whose path does not exist: check and start name addressBook.path; exit 3', async () => {
    const file = await config(
      'file-book.yaml',
      'listeners: [{ name: web, address: 127.0.0.1:0 }]\naddressBook: { name: file, path: nope.yaml }\n',
    );
    for (const cmd of ['check', 'start']) {
      const r = await runCli([cmd, '--config', file]);
      expect(r.code).toBe(3);
      expect(r.messages).toEqual([`addressBook.path: file not found: ${join(dir, 'nope.yaml')}`]);
      expectNoStack(r.stderr);
    }
  });

  it('a busy listener port: listeners[0].address … is in use (EADDRINUSE); exit 1', async () => {
    const port = await busyPort();
    const file = await config('busy.yaml', `listeners: [{ name: web, address: 127.0.0.1:${port} }]\n${BOOK}`);
    const r = await runCli(['start', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.messages).toEqual([`listeners[0].address: 127.0.0.1:${port} is in use (EADDRINUSE)`]);
    expectNoStack(r.stderr);
  });

  it('a busy listener port with panel: worker: the same line, naming the thread; exit 1', async () => {
    const port = await busyPort();
    const file = await config('busy-worker.yaml', `listeners: [{ name: web, address: 127.0.0.1:${port} }]\n${BOOK}`);
    const r = await runCli(['start', '--config', file, '--panel', 'worker', '--workers', '1']);
    expect(r.code).toBe(1);
    expect(r.messages).toEqual([`listeners[0].address: 127.0.0.1:${port} is in use (EADDRINUSE) (worker 0)`]);
    expectNoStack(r.stderr);
  });

  it('a busy admin port: admin.address … is in use (EADDRINUSE); exit 1', async () => {
    const port = await busyPort();
    const file = await config(
      'busy-admin.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0 }]\nadmin: { address: 127.0.0.1:${port} }\n${BOOK}`,
    );
    const r = await runCli(['start', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.messages).toEqual([`admin.address: 127.0.0.1:${port} is in use (EADDRINUSE)`]);
    expectNoStack(r.stderr);
  });

  it('an etcd book whose store does not answer: one line naming addressBook.endpoints; exit 1 (runtime, not config)', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    const file = await config(
      'etcd-down.yaml',
      `listeners: [{ name: web, address: 127.0.0.1:0 }]\naddressBook: { name: etcd, endpoints: ["http://127.0.0.1:${port}"], prefix: /swb/, dialTimeout: 1s }\n`,
    );
    for (const cmd of ['check', 'start']) {
      const r = await runCli([cmd, '--config', file]);
      expect(r.code).toBe(1);
      expect(r.messages).toHaveLength(1);
      expect(r.messages[0]).toMatch(new RegExp(`^addressBook\\.endpoints: http://127\\.0\\.0\\.1:${port}: `));
      expectNoStack(r.stderr);
    }
  });

  it('a config file that does not exist: one line naming it; exit 3', async () => {
    const r = await runCli(['check', '--config', join(dir, 'missing.yaml')]);
    expect(r.code).toBe(3);
    expect(r.messages).toEqual([`${join(dir, 'missing.yaml')}: config file not found`]);
  });

  it('usage errors exit 2 (unknown option, unknown command, bad value)', async () => {
    for (const args of [['check', '--bogus'], ['frobnicate'], ['start', '--workers', 'x']]) {
      const r = await runCli(args);
      expect(r.code).toBe(2);
      expect(r.messages).toHaveLength(1);
      expectNoStack(r.stderr);
    }
  });

  it('an unexpected error prints one line; its stack only with SWITCHBOARD_DEBUG=1 or --verbose', async () => {
    await writeFile(
      join(dir, 'buggy-book.ts'),
      "export default { name: 'buggy', create: () => ({ start() { throw new TypeError('boom'); }, close: async () => {}, findAddresses: () => undefined }) };\n",
    );
    const file = await config(
      'buggy.yaml',
      'listeners: [{ name: web, address: 127.0.0.1:0 }]\naddressBook: { name: ./buggy-book.ts }\n',
    );
    const plain = await runCli(['check', '--config', file]);
    expect(plain.code).toBe(1);
    expect(plain.messages).toEqual([
      'switchboard: internal error: boom (pass --verbose or set SWITCHBOARD_DEBUG=1 for the stack)',
    ]);
    expectNoStack(plain.stderr);
    const debug = await runCli(['check', '--config', file], { env: { SWITCHBOARD_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(STACK);
    const verbose = await runCli(['check', '--verbose', '--config', file]);
    expect(verbose.stderr).toMatch(STACK);
  });

  it('npm start with a demo port taken: one line naming the demo backend; exit 1', async () => {
    // Whichever demo port is taken (this one, or one another process holds) is named.
    const s = createServer();
    await new Promise<void>((r) => s.once('error', () => r()).listen(9003, '127.0.0.1', r));
    held.push(s);
    const r = await runCli([], { script: 'examples/demo/start.ts' });
    expect(r.code).toBe(1);
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]).toMatch(/^demo backend [\w-]+: 127\.0\.0\.1:900\d is in use \(EADDRINUSE\)$/);
    expectNoStack(r.stderr);
  });
});

describe('import-bfe, db and etcd: the same exit codes as check', () => {
  it('an invalid source is exit 3 (one line, no stack); an etcd that does not answer is exit 1', async () => {
    const bad = await config('bad-routes.yaml', 'addressBook: { name: bfe, products: 5 }\n');
    const cases: [string[], number, RegExp][] = [
      [
        ['import-bfe', join(dir, 'no-such-conf')],
        3,
        /^import-bfe .*no-such-conf: bfe config: host_rule\.data: not found/,
      ],
      [
        ['db', 'import', '--db', join(dir, 'routes.db'), bad],
        3,
        /^db import: import .*bad-routes\.yaml: addressBook: products: /,
      ],
      [
        ['db', 'import', '--db', join(dir, 'routes.db'), join(dir, 'missing.yaml')],
        3,
        /^db import: import .*missing\.yaml: ENOENT/,
      ],
      [['etcd', 'import', '--endpoints', 'http://127.0.0.1:1', bad], 3, /^etcd import: import .*bad-routes\.yaml: /],
      [['etcd', 'export', '--endpoints', 'http://127.0.0.1:1'], 1, /^etcd export: .*UNAVAILABLE/],
    ];
    for (const [args, code, line] of cases) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.messages).toHaveLength(1);
      expect(r.messages[0]).toMatch(line);
      expectNoStack(r.stderr);
    }
  });
});

describe('bin/switchboard.js on an old Node', () => {
  const old = '/usr/bin/node';
  const version = existsSync(old) ? execFileSync(old, ['-p', 'process.versions.node']).toString().trim() : '';
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const tooOld = version !== '' && (major < 22 || (major === 22 && minor < 18));

  it.skipIf(!tooOld)(`refuses Node ${version || '(none)'} in one line naming the fix; exit 1`, async () => {
    const r = await runCli(['check'], { node: old });
    expect(r.code).toBe(1);
    expect(r.messages).toEqual([
      `switchboard: needs Node >= 22.18 (Node 24 LTS recommended), this is v${version}; run \`source scripts/use-node.sh\` in the repository (it puts Node 24 on PATH) or install Node 24`,
    ]);
    expectNoStack(r.stderr);
  });
});
