/**
 * Plugins written outside the repository (issue 45 item 3, docs/plugins.md): the package as npm
 * ships it. `npm pack` (whose prepack emits the public entry's .d.ts), the tarball installed into
 * a fresh project outside the checkout (from the npm cache: `--offline`, `--prefer-offline` if
 * the cache lacks something), the three example plugins of examples/plugins/ copied there, each
 * importing nothing from Switchboard but `switchboard/plugin`; they type-check against the
 * shipped declarations, the docs' unit test of the book runs under `switchboard/register`, and
 * real requests route through them under `npx switchboard start` (worker panel) in that project.
 *
 * Slow for a test: about 20 s of CPU (pack with its declarations, install, tsc, two router
 * threads), 75-100 s of wall time on the shared 2-core machine at load 10-16.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { ROOT } from '../harness/cli-run.ts';
import { httpGet } from '../harness/http.ts';
import { eventually } from '../harness/router.ts';

const run = promisify(execFile);
/** This process's Node first on PATH: npm, npx and the router run on it. */
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};
const PLUGINS = ['hosts-book.ts', 'first-up.ts', 'deny-paths.ts'];
/** A user's tsconfig, stricter than most: the shipped declarations must hold under it. */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2024',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    types: ['node'],
  },
  include: ['*.ts'],
};

let dir: string | undefined;
let router: ChildProcess | undefined;
const backends: TestBackend[] = [];

afterAll(async () => {
  // npx is a wrapper: the process group (detached) holds npm, its shell and the router.
  if (router?.pid !== undefined && router.exitCode === null) process.kill(-router.pid, 'SIGKILL');
  await Promise.all(backends.map((b) => b.close()));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The fenced block that follows `marker` in docs/plugins.md. */
async function docBlock(marker: string): Promise<string> {
  const doc = await readFile(join(ROOT, 'docs/plugins.md'), 'utf8');
  const start = doc.indexOf('```ts\n', doc.indexOf(marker)) + '```ts\n'.length;
  return doc.slice(start, doc.indexOf('```\n', start));
}

/** `npm install` of the tarball from the cache, online only for what the cache lacks. */
async function install(project: string, tarball: string): Promise<void> {
  const args = ['install', '--no-save', '--ignore-scripts', tarball];
  try {
    await run('npm', ['--offline', ...args], { cwd: project, env, timeout: 120_000 });
  } catch {
    await run('npm', ['--prefer-offline', ...args], { cwd: project, env, timeout: 120_000 });
  }
}

/** The router's log (stderr), line by line. */
const logLines: string[] = [];

/**
 * `npx switchboard start` in `project` on the worker panel (its threads load the package's .ts
 * and the plugins too); resolves with the port its `web` listener bound.
 */
function startRouter(project: string): Promise<number> {
  const args = ['switchboard', 'start', '--config', 'switchboard.yaml', '--panel', 'worker', '--workers', '2'];
  let port = 0;
  const child = spawn('npx', args, {
    cwd: project,
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  router = child;
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`router exited ${code}:\n${logLines.join('\n')}`)));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      logLines.push(line);
      const l = line.startsWith('{') ? (JSON.parse(line) as { msg?: string; address?: string }) : {};
      if (l.msg === 'listening') port = Number(l.address?.split(':').pop());
      // Every thread live first: a book swap while the worker threads start can miss the ones not live yet.
      if (l.msg === 'switchboard started') resolve(port);
    });
  });
}

describe('switchboard/plugin, installed from the packed tarball', () => {
  it('docs/plugins.md shows the example book as it is', async () => {
    const book = await readFile(join(ROOT, 'examples/plugins/hosts-book.ts'), 'utf8');
    expect(await docBlock('<!-- examples/plugins/hosts-book.ts')).toBe(book);
  });

  it('type-checks a book, an operator and a policy written against it and routes through them', async () => {
    dir = await mkdtemp(join(tmpdir(), 'swb-plugin-'));
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, env });
    const tarball = join(dir, packed.stdout.trim().split('\n').pop()!);
    const project = join(dir, 'project');
    await mkdir(project);
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'my-router', private: true, type: 'module' }),
    );
    await install(project, tarball);

    for (const f of PLUGINS) {
      await copyFile(join(ROOT, 'examples/plugins', f), join(project, f));
      const imports = [...(await readFile(join(project, f), 'utf8')).matchAll(/from '([^']+)'/g)].map((m) => m[1]);
      expect(
        imports.filter((s) => !s?.startsWith('node:')).every((s) => s === 'switchboard/plugin'),
        f,
      ).toBe(true);
    }
    const [a, b] = await Promise.all([startHttpBackend('a'), startHttpBackend('b')]);
    backends.push(a!, b!);
    const hosts = (first: TestBackend, second: TestBackend) =>
      JSON.stringify({ 'www.example.test': [first.address, second.address] });
    await writeFile(join(project, 'hosts.json'), hosts(a!, b!));

    // The docs' unit test of the book, type-checked with the plugins, run under switchboard/register.
    await writeFile(join(project, 'book.test.ts'), await docBlock('<!-- book.test.ts'));
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', project], { cwd: project, env, timeout: 120_000 }).catch(
      (e: { stdout?: string }) => ({ stdout: `tsc failed: ${e.stdout}` }),
    );
    expect(checked.stdout).toBe('');
    const unit = ['--import', 'switchboard/register', '--test', 'book.test.ts'];
    await run(process.execPath, unit, { cwd: project, env, timeout: 60_000 });
    const config = (await readFile(join(ROOT, 'examples/plugins/switchboard.yaml'), 'utf8')).replace(
      '127.0.0.1:8080',
      '127.0.0.1:0',
    );
    await writeFile(join(project, 'switchboard.yaml'), config);
    const port = await startRouter(project);

    // first-up: every request to the first backend listed (round-robin would alternate).
    for (let i = 0; i < 4; i++) expect(JSON.parse((await httpGet(port, '/x')).body).backend).toBe('a');
    expect((await httpGet(port, '/', { host: 'other.example.test' })).status).toBe(404);
    const denied = await httpGet(port, '/admin/users');
    expect([denied.status, denied.body]).toEqual([403, 'denied\n']);
    expect(a!.hits).toBe(4);

    // The book watches its file: b listed first, requests follow.
    await writeFile(join(project, 'hosts.json'), hosts(b!, a!));
    await eventually(async () => JSON.parse((await httpGet(port, '/x')).body).backend === 'b', 20_000, 'b first');
    // The hook's stripping is Node's experimental API; its warning is not the operator's concern.
    expect(logLines.filter((l) => l.includes('Warning'))).toEqual([]);
  }, 240_000);
});
