/**
 * Access log to a file with reopen (issue 7 §6): after logrotate moves the file, `reopen()`
 * (what SIGUSR1 triggers) writes to a fresh file at the configured path.
 */
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createAccessLog } from '../../src/base/log.ts';
import { eventually, tempDir } from '../harness/router.ts';

const record = (client: string) => ({ listener: 'web', client, bytesIn: 1, bytesOut: 2, durationMs: 3, result: 'ok' });

it('reopen() after a rename writes new lines to a new file at the same path', async () => {
  const dir = await tempDir();
  const path = join(dir, 'access.log');
  const log = createAccessLog(path);
  log(record('1.1.1.1:1'));
  log.flush();
  await eventually(async () => (await readFile(path, 'utf8').catch(() => '')).includes('1.1.1.1:1'));
  await rename(path, `${path}.1`);
  log.reopen();
  log(record('2.2.2.2:2'));
  await eventually(async () => (await readFile(path, 'utf8').catch(() => '')).includes('2.2.2.2:2'), 5_000, 'new file');
  const rotated = await readFile(`${path}.1`, 'utf8');
  expect(rotated).toContain('1.1.1.1:1');
  expect(rotated).not.toContain('2.2.2.2:2');
  const line = JSON.parse((await readFile(path, 'utf8')).trim()) as Record<string, unknown>;
  expect(line).toMatchObject({
    listener: 'web',
    client: '2.2.2.2:2',
    bytesIn: 1,
    bytesOut: 2,
    result: 'ok',
    msg: 'access',
  });
});

it('"off" writes nothing and reopen is harmless', () => {
  const log = createAccessLog('off');
  expect(() => {
    log(record('x'));
    log.reopen();
    log.flush();
  }).not.toThrow();
});
