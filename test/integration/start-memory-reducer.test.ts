/**
 * `switchboard start` re-executes itself once under `--no-memory-reducer` (src/process/memory-reducer.ts,
 * called from bin/switchboard.js), in the same process: the real CLI is started with a probe
 * preloaded that logs its pid and node arguments each time a Node starts in it. `start` logs it
 * twice, one pid, the second time under the flag, and then serves and stops on SIGTERM like
 * any `start`; with a reducer flag of the user's own, or for another command, the probe runs once.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { type LogLine, spawnCli } from '../harness/cli.ts';
import { runCli } from '../harness/cli-run.ts';
import { httpGet } from '../harness/http.ts';
import { tempDir } from '../harness/router.ts';

const PROBE = `process.stderr.write(JSON.stringify({ msg: 'probe', pid: process.pid, execArgv: process.execArgv }) + '\\n');\n`;

async function setUp(backend: string): Promise<{ file: string; probe: string }> {
  const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend}] }\n`, 'probe.mjs': PROBE });
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    [
      'listeners: [{ name: web, address: 127.0.0.1:0 }]',
      'addressBook: { name: file, path: servers.yaml }',
      'log: { access: "off" }',
    ].join('\n'),
  );
  return { file, probe: join(dir, 'probe.mjs') };
}

const probes = (logs: readonly LogLine[]) => logs.filter((l) => l.msg === 'probe');

describe('switchboard start: without V8 memory reducer', () => {
  it('re-executes itself once, same pid, under --no-memory-reducer, and serves', async () => {
    const backend = await startHttpBackend('web');
    const { file, probe } = await setUp(backend.address);
    const cli = spawnCli(file, { nodeArgs: ['--import', probe] });
    try {
      const port = await cli.port('web');
      expect((await httpGet(port)).status).toBe(200);
      const seen = probes(cli.logs);
      expect(seen.map((l) => l.pid)).toEqual([cli.child.pid, cli.child.pid]);
      expect(seen[0]?.execArgv).toEqual(['--import', probe]);
      expect(seen[1]?.execArgv).toEqual(['--no-memory-reducer', '--import', probe]);
      cli.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
    } finally {
      cli.kill('SIGKILL');
      await backend.close();
    }
  });

  it("keeps V8's reducer for a process started with a reducer flag of its own", async () => {
    const backend = await startHttpBackend('web');
    const { file, probe } = await setUp(backend.address);
    const cli = spawnCli(file, { nodeArgs: ['--memory-reducer', '--import', probe] });
    try {
      const port = await cli.port('web');
      expect((await httpGet(port)).status).toBe(200);
      const seen = probes(cli.logs);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.execArgv).toEqual(['--memory-reducer', '--import', probe]);
    } finally {
      cli.kill('SIGKILL');
      await backend.close();
    }
  });

  it('leaves other commands as they are (check runs once)', async () => {
    const { file, probe } = await setUp('127.0.0.1:9');
    const r = await runCli(['check', '--config', file], { env: { NODE_OPTIONS: `--import=${probe}` } });
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes('"probe"'))).toHaveLength(1);
  });
});
