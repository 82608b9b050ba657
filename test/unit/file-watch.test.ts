/**
 * src/base/file-watch.ts: stat polling from a baseline taken when the watch starts. An edit made
 * right after `watchFiles` returns is reported (fs.watchFile took its first stat later, and such
 * an edit became its baseline); a file removed and written again is reported; `close()` stops it.
 */
import { pbkdf2 } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { watchFiles } from '../../src/base/file-watch.ts';
import { eventually, tempDir } from '../harness/router.ts';

describe('watchFiles', () => {
  it('reports an edit made right after the watch starts, while the thread pool is busy', async () => {
    const file = join(await tempDir(), 'a.txt');
    writeFileSync(file, 'one\n');
    // Every thread of libuv's pool busy for a while (as on a loaded machine): a first stat taken
    // there (fs.watchFile's) would run after the edit below and take it as its baseline.
    const busy = Array.from({ length: 4 }, () => promisify(pbkdf2)('x', 'y', 200_000, 32, 'sha256'));
    let changes = 0;
    const watcher = watchFiles([file], () => changes++, 20, 10);
    writeFileSync(file, 'two, longer\n');
    await Promise.all(busy);
    try {
      await eventually(() => changes === 1, 5_000, 'the edit reported');
    } finally {
      watcher.close();
    }
  });

  it('reports a file removed, then one written again; nothing after close()', async () => {
    const file = join(await tempDir(), 'b.txt');
    writeFileSync(file, 'one\n');
    let changes = 0;
    const watcher = watchFiles([file], () => changes++, 20, 10);
    rmSync(file);
    await eventually(() => changes === 1, 5_000, 'the removal reported');
    writeFileSync(file, 'back\n');
    await eventually(() => changes === 2, 5_000, 'the new file reported');
    watcher.close();
    writeFileSync(file, 'after close, longer\n');
    await new Promise((r) => setTimeout(r, 200)); // ten polls' worth: none may run
    expect(changes).toBe(2);
  });
});
