/**
 * README "Quick start" does what it says (issue 19 item 4): the demo (`npm start` runs
 * `node examples/demo/start.ts`) is started on free ports (DEMO_CONFIG, DEMO_BACKEND_PORTS), then
 * every command of the section's "another terminal" blocks is run as written — ports
 * substituted, `npx switchboard` as `node bin/switchboard.js` — and its output is checked against
 * the comment beside it: the routing curls, the admin curls, the 70/30 split across clients,
 * `route` for one client, one access-log line per request, and the demo backends alone. Issue 45
 * items 8 and 9: the install block sources scripts/use-node.sh before `npm install`, the
 * `node examples/demo/backends.ts` line says it needs the sourced Node on an older one, and the
 * refusal sample (`bad.yaml` and what `check` prints for it) is what `check` really prints.
 */
import { type ChildProcess, exec, spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../harness/ports.ts';
import { eventually, tempDir } from '../harness/router.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** README's "Quick start" section, up to the next section. */
async function quickStart(): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start\n');
  expect(start).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** The shell commands of README's Quick start after "in another terminal" (one per entry). */
async function quickStartCommands(): Promise<string[]> {
  const section = await quickStart();
  const after = section.slice(section.indexOf('Then, in another terminal'));
  const blocks = [...after.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const commands: string[] = [];
  for (const block of blocks) {
    let pending = '';
    for (const line of block.split('\n')) {
      if (line.trim() === '') continue;
      pending = pending === '' ? line : `${pending}\n${line}`;
      // A `for … do` runs until its `done`.
      if (pending.startsWith('for ') && !/^done\b/m.test(pending)) continue;
      commands.push(pending);
      pending = '';
    }
  }
  return commands;
}

function sh(command: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    exec(command, { cwd: ROOT, env, shell: '/bin/sh' }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), out: stdout + stderr });
    });
  });
}

let dir: string;
let demo: ChildProcess;
let stdout = '';
let stderr = '';
let web = 0;
let admin = 0;
let backendPorts: number[];

beforeAll(async () => {
  backendPorts = await freePorts(5);
  const conf = await readFile(join(ROOT, 'conf/switchboard.yaml'), 'utf8');
  let copy = conf.replace('127.0.0.1:8080', '127.0.0.1:0').replace('127.0.0.1:9901', '127.0.0.1:0');
  backendPorts.forEach((p, i) => {
    copy = copy.replace(`127.0.0.1:${9001 + i}`, `127.0.0.1:${p}`);
  });
  dir = await tempDir({ 'switchboard.yaml': copy });
  demo = spawn(process.execPath, ['examples/demo/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, DEMO_CONFIG: join(dir, 'switchboard.yaml'), DEMO_BACKEND_PORTS: backendPorts.join(',') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo.stdout?.on('data', (c) => (stdout += c));
  demo.stderr?.on('data', (c) => (stderr += c));
  await eventually(() => /"msg":"switchboard started"/.test(stderr), 20_000, `the demo to start:\n${stderr}`);
  const started = stderr.split('\n').find((l) => l.includes('"switchboard started"'))!;
  admin = Number(
    String((JSON.parse(started) as { admin: string }).admin)
      .split(':')
      .pop(),
  );
  const listening = stderr.split('\n').find((l) => l.includes('"listening"') && l.includes('"web"'))!;
  web = Number(
    String((JSON.parse(listening) as { address: string }).address)
      .split(':')
      .pop(),
  );
}, 30_000);

afterAll(async () => {
  if (demo !== undefined && demo.exitCode === null) {
    demo.kill('SIGTERM');
    await new Promise((r) => demo.once('exit', r));
  }
  await rm(dir, { recursive: true, force: true });
});

/** What each README command must print (its comment, checked). */
function expectation(command: string): ((out: string, code: number) => void) | undefined {
  const answered = (name: string) => (out: string) => expect(out).toContain(`${name} answered GET`);
  if (command.startsWith('for ')) {
    return (out) => {
      expect(out).toMatch(/^\s*12 web-dc1$/m);
      expect(out).toMatch(/^\s*8 web-dc2$/m);
    };
  }
  if (command.includes('/static/app.css')) return answered('static');
  if (command.includes('/api/orders')) return answered('api');
  if (command.includes('X-Canary: 1')) return answered('canary');
  if (command.includes('unknown.test')) {
    return (out) => {
      expect(out).toMatch(/^HTTP\/1\.1 404/m);
      expect(out.toLowerCase()).toContain('x-switchboard-error: no_route');
    };
  }
  if (command.includes("'Host: www.example.test' localhost:8080/ ")) return answered('web-dc1');
  if (command.includes('/healthz')) return (out) => expect(out.trim()).toBe('ok');
  if (command.includes('/backends')) {
    return (out) => {
      const body = JSON.parse(out) as { backends: { id: string }[] };
      expect(body.backends.map((b) => b.id).sort()).toEqual(backendPorts.map((p) => `127.0.0.1:${p}`).sort());
    };
  }
  if (command.includes('switchboard route')) {
    return (out, code) => {
      expect(code).toBe(0);
      expect(out).toMatch(/chosen: 127\.0\.0\.1:900[12] in subcluster dc[12] \(attempt 1, client 198\.51\.100\.7\)/);
    };
  }
  return undefined;
}

describe('README quick start', () => {
  it('every command in "another terminal" prints what its comment says; one access line per request', async () => {
    const commands = (await quickStartCommands()).filter(
      (c) => c.startsWith('curl') || c.startsWith('for ') || c.startsWith('npx switchboard route'),
    );
    expect(commands.length).toBeGreaterThanOrEqual(9);
    let proxied = 0;
    for (const command of commands) {
      const check = expectation(command);
      expect(check, `no expectation for README command: ${command}`).toBeDefined();
      const run = command
        .replaceAll('localhost:8080', `localhost:${web}`)
        .replaceAll('localhost:9901', `localhost:${admin}`)
        .replaceAll('npx switchboard', `"${process.execPath}" bin/switchboard.js`);
      const r = await sh(run);
      check!(r.out, r.code);
      if (command.includes('localhost:8080')) proxied += command.startsWith('for ') ? 20 : 1;
    }
    await eventually(() => stdout.trim().split('\n').length >= proxied, 5000, 'access lines');
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { host?: string });
    expect(lines).toHaveLength(proxied);
  }, 60_000);

  it('the install block sources scripts/use-node.sh before npm install; the backends line names the Node it needs', async () => {
    const section = await quickStart();
    const install = /```sh\n([\s\S]*?)```/.exec(section)![1]!.split('\n');
    const source = install.findIndex((l) => l.startsWith('. scripts/use-node.sh'));
    const npmInstall = install.findIndex((l) => l.startsWith('npm install'));
    expect(source).toBeGreaterThan(-1);
    expect(npmInstall).toBeGreaterThan(source);
    expect(install.findIndex((l) => l.startsWith('npm test'))).toBeGreaterThan(npmInstall);
    // The prose right before the block that runs the demo backends alone says why Node 20 fails.
    const block = section.slice(0, section.indexOf('node examples/demo/backends.ts')).lastIndexOf('```sh');
    const lead = section.slice(section.lastIndexOf('\n\n', block - 3), block);
    expect(lead).toMatch(/Node ≥ 22\.18/);
    expect(lead).toContain('scripts/use-node.sh');
  });

  it('the refusal sample is what `switchboard check` prints for bad.yaml, exit code included', async () => {
    const section = await quickStart();
    const config = /```yaml\n# bad\.yaml\n([\s\S]*?)```/.exec(section);
    const sample = /```\n\$ npx switchboard check --config bad\.yaml; echo "exit \$\?"\n([\s\S]*?)```/.exec(section);
    expect(config, 'a ```yaml block starting # bad.yaml').not.toBeNull();
    expect(sample, 'a block with $ npx switchboard check --config bad.yaml; echo "exit $?"').not.toBeNull();
    const lines = sample![1]!.trimEnd().split('\n');
    const exit = lines.pop()!;
    const bad = await tempDir({ 'bad.yaml': config![1]! });
    try {
      const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, 'bin/switchboard.js'), 'check', '--config', 'bad.yaml'], {
          cwd: bad,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (c) => (out += c));
        child.stderr.on('data', (c) => (err += c));
        child.once('close', (code) => resolve({ code: code ?? -1, stdout: out, stderr: err }));
      });
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toEqual(lines);
      expect(`exit ${r.code}`).toBe(exit);
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  });

  it('the demo backends run alone (node examples/demo/backends.ts)', async () => {
    const ports = await freePorts(5);
    const alone = spawn(process.execPath, ['examples/demo/backends.ts'], {
      cwd: ROOT,
      env: { ...process.env, DEMO_BACKEND_PORTS: ports.join(',') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    alone.stdout?.on('data', (c) => (out += c));
    try {
      await eventually(() => out.includes('demo backends on'), 10_000);
      expect(out).toContain(`web-dc1=127.0.0.1:${ports[0]}`);
      const r = await sh(`curl -s -H 'Host: x.test' localhost:${ports[4]}/hello`);
      expect(r.out).toBe('api answered GET x.test/hello\n');
    } finally {
      alone.kill('SIGTERM');
    }
  });
});
