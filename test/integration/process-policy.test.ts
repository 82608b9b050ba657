/**
 * The process policy of `switchboard start` (app/runtime/process-policy.ts), on the real CLI: a bug
 * that escapes every per-connection catch is injected from a preloaded module (a signal handler
 * that rejects a promise, another that throws), since no client input can reach it any more.
 * An unhandled rejection is logged with its stack and the router serves on; an uncaught
 * exception is logged at fatal, then the router drains and exits 1.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { httpGet } from '../harness/http.ts';
import { tempDir } from '../harness/router.ts';

const PRELOAD = `
process.on('SIGUSR2', () => { Promise.reject(new Error('injected rejection')); });
process.on('SIGWINCH', () => { throw new Error('injected throw'); });
`;

describe('switchboard start: errors no connection caught', () => {
  it('logs an unhandled rejection and serves on; drains and exits 1 on an uncaught exception', async () => {
    const backend = await startHttpBackend('web');
    const dir = await tempDir({
      'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n`,
      'inject.mjs': PRELOAD,
    });
    const file = join(dir, 'switchboard.yaml');
    await writeFile(
      file,
      [
        'listeners: [{ name: web, address: 127.0.0.1:0 }]',
        'addressBook: { name: file, path: servers.yaml }',
        'limits: { drainTimeout: 2s }',
        'log: { access: "off" }',
      ].join('\n'),
    );
    const cli = spawnCli(file, { nodeArgs: ['--import', join(dir, 'inject.mjs')] });
    try {
      const port = await cli.port('web');
      expect((await httpGet(port)).status).toBe(200);

      cli.kill('SIGUSR2');
      const rejected = await cli.waitForLog((l) => /unhandled promise rejection/.test(l.msg ?? ''));
      expect(rejected.level).toBe('error');
      expect(JSON.stringify(rejected.err)).toMatch(/injected rejection.*at /);
      expect((await httpGet(port)).status).toBe(200);

      cli.kill('SIGWINCH');
      const fatal = await cli.waitForLog((l) => /uncaught exception/.test(l.msg ?? ''));
      expect(fatal.level).toBe('fatal');
      expect(JSON.stringify(fatal.err)).toMatch(/injected throw.*at /);
      await cli.waitForLog((l) => l.msg === 'shut down');
      expect(await cli.exited).toBe(1);
    } finally {
      cli.kill('SIGKILL');
      await backend.close();
    }
  });
});
