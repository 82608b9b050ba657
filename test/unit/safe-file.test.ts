/**
 * Reading a user-named file (src/base/safe-file.ts, issue 39 item 7): a regular file within its cap
 * is read; a FIFO, a device (a symlink to /dev/zero), a directory, a missing file and a file over
 * the cap are refused with a FileReadError naming the path and what it is. A FIFO is refused at
 * once and no libuv threadpool thread is left waiting on it: eight refused reads later,
 * `dns.lookup` and another fs call still answer.
 */
import { lookup } from 'node:dns/promises';
import { mkdir, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CONFIG_FILE_LIMIT,
  type FileLimit,
  FileReadError,
  PEM_FILE_LIMIT,
  readUserFile,
  readUserFileSync,
} from '../../src/base/safe-file.ts';
import { tempDir } from '../harness/router.ts';
import { mkfifo, releaseFifoReaders, rssMiB, within } from '../harness/special-files.ts';

const SMALL: FileLimit = { bytes: 1024, what: 'test files' };

/** The FileReadError `fn` rejects or throws with. */
async function refusal(fn: () => unknown): Promise<FileReadError> {
  try {
    await fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FileReadError);
    expect((e as FileReadError).code).toBe('SWB_ERR_FILE');
    return e as FileReadError;
  }
  throw new Error('expected a refusal');
}

const fifos: string[] = [];
afterEach(() => {
  for (const f of fifos.splice(0)) releaseFifoReaders(f);
});

describe('readUserFile', () => {
  it('reads a regular file up to its cap, through a symlink too', async () => {
    const dir = await tempDir({ 'a.pem': 'x'.repeat(1024) });
    await symlink(join(dir, 'a.pem'), join(dir, 'link.pem'));
    expect((await readUserFile(join(dir, 'a.pem'), SMALL)).length).toBe(1024);
    expect(readUserFileSync(join(dir, 'link.pem'), SMALL).length).toBe(1024);
    expect(PEM_FILE_LIMIT).toBe(1024 * 1024);
    expect(CONFIG_FILE_LIMIT).toBe(64 * 1024 * 1024);
  });

  it.each([
    ['async', (p: string, l: FileLimit) => readUserFile(p, l)],
    ['sync', (p: string, l: FileLimit) => readUserFileSync(p, l)],
  ])('%s: refuses a FIFO, a device, a directory, a missing file and a file over the cap', async (_k, read) => {
    const dir = await tempDir({ 'big.pem': 'x'.repeat(1025) });
    const fifo = join(dir, 'fifo.pem');
    mkfifo(fifo);
    fifos.push(fifo);
    await symlink('/dev/zero', join(dir, 'zero.pem'));
    await mkdir(join(dir, 'dir.pem'));
    const cases: [string, FileReadError['reason'], string][] = [
      ['fifo.pem', 'not_regular', `cannot read ${fifo}: a FIFO, not a regular file`],
      ['zero.pem', 'not_regular', `cannot read ${join(dir, 'zero.pem')}: a character device, not a regular file`],
      ['dir.pem', 'not_regular', `cannot read ${join(dir, 'dir.pem')}: a directory, not a regular file`],
      ['none.pem', 'not_found', `file not found: ${join(dir, 'none.pem')}`],
      [
        'big.pem',
        'too_large',
        `cannot read ${join(dir, 'big.pem')}: larger than 1024 bytes (the limit for test files)`,
      ],
    ];
    for (const [name, reason, message] of cases) {
      const e = await refusal(() =>
        within(
          Promise.resolve().then(() => read(join(dir, name), SMALL)),
          5_000,
          name,
        ),
      );
      expect({ name, reason: e.reason, message: e.message, path: e.path }).toEqual({
        name,
        reason,
        message,
        path: join(dir, name),
      });
    }
  });

  it('reads at most cap + 1 bytes: a file whose fstat says 0 bytes is still capped', async () => {
    // /proc files are regular with size 0; what is read decides.
    const e = await refusal(() => readUserFile('/proc/self/status', SMALL));
    expect(e.reason).toBe('too_large');
    expect((await readUserFile('/proc/self/status', { bytes: 1 << 20, what: 'x' })).toString()).toContain('Name:');
  });

  it('leaves no threadpool thread on a FIFO: eight refused reads later, dns.lookup and fs calls answer', async () => {
    const dir = await tempDir({ 'ok.pem': 'ok' });
    const fifo = join(dir, 'cert.pem');
    mkfifo(fifo);
    fifos.push(fifo);
    // Twice the default threadpool (4): a read that blocked would leave none for what follows.
    const reads = Array.from({ length: 8 }, () => refusal(() => readUserFile(fifo, SMALL)));
    const refused = await within(Promise.all(reads), 10_000, 'eight FIFO reads');
    expect(refused.every((e) => e.reason === 'not_regular')).toBe(true);
    await within(lookup('localhost'), 10_000, 'dns.lookup after the FIFO reads');
    await within(stat(join(dir, 'ok.pem')), 10_000, 'fs.stat after the FIFO reads');
    expect((await within(readUserFile(join(dir, 'ok.pem'), SMALL), 10_000, 'a regular read')).toString()).toBe('ok');
  });

  it('a symlink to /dev/zero is refused without reading it: RSS does not grow', async () => {
    const dir = await tempDir();
    await symlink('/dev/zero', join(dir, 'cert.pem'));
    const before = rssMiB();
    for (let i = 0; i < 8; i++) {
      expect((await refusal(() => readUserFile(join(dir, 'cert.pem'), { bytes: 64 << 20, what: 'x' }))).reason).toBe(
        'not_regular',
      );
    }
    expect(rssMiB() - before).toBeLessThan(32);
  });
});
