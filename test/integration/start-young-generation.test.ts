/**
 * `switchboard start` installs the young-generation cap (src/process/young-generation.ts, wired in
 * app/start.ts): the real CLI is started with a probe preloaded (`node --import probe.mjs`),
 * which on SIGUSR2 allocates garbage with some survivors across event-loop turns on the main
 * thread and logs the largest semi-space capacity it saw (test/harness/young-generation.ts). On
 * the net panel that stays at the cap; on the worker panel the main thread is left uncapped
 * (its threads have their own limit), and the same load grows it past the cap, so the bound can
 * fail.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../harness/cli.ts';
import { tempDir } from '../harness/router.ts';
import { LOAD, SEMI_SPACE_CAP } from '../harness/young-generation.ts';

const PROBE = `
process.on('SIGUSR2', async () => {
${LOAD}
  process.stderr.write(JSON.stringify({ msg: 'probe: largest semi-space', bytes: max }) + '\\n');
});
`;

/** Starts the CLI with the probe, runs the load once the router has started, returns the bytes. */
async function largestSemiSpace(args: readonly string[]): Promise<number> {
  const dir = await tempDir({
    'servers.yaml': '- { host: "*", backends: [127.0.0.1:9], retries: 0 }\n',
    'probe.mjs': PROBE,
  });
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    [
      'listeners: [{ name: web, address: 127.0.0.1:0 }]',
      'addressBook: { name: file, path: servers.yaml, watch: false }',
      'log: { access: "off" }',
    ].join('\n'),
  );
  // NODE_OPTIONS emptied: semi-space flags of the test's own environment would turn the cap off.
  const cli = spawnCli(file, { nodeArgs: ['--import', join(dir, 'probe.mjs')], args, env: { NODE_OPTIONS: '' } });
  try {
    await cli.waitForLog((l) => l.msg === 'switchboard started');
    cli.child.kill('SIGUSR2');
    const line = await cli.waitForLog((l) => l.msg === 'probe: largest semi-space', 60_000);
    return Number(line.bytes);
  } finally {
    cli.kill();
    await cli.exited;
  }
}

describe('switchboard start: the young-generation cap', () => {
  it('caps the main thread of the net panel', async () => {
    const bytes = await largestSemiSpace(['--panel', 'net']);
    expect(bytes).toBeGreaterThan(SEMI_SPACE_CAP / 2); // it did grow, up to the cap
    expect(bytes).toBeLessThanOrEqual(SEMI_SPACE_CAP);
  }, 90_000);

  it('leaves the worker panel main thread uncapped: the same load grows past the cap', async () => {
    const bytes = await largestSemiSpace(['--panel', 'worker', '--workers', '1']);
    expect(bytes).toBeGreaterThan(SEMI_SPACE_CAP);
  }, 90_000);
});
