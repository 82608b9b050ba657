/**
 * The last-good cache write never follows a planted symlink (issue 39 item 8): the temporary
 * file is created exclusively (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) under an unpredictable
 * name, then renamed over the cache. Symlinks planted at the old predictable name
 * (`<cache>.<pid>.tmp`) and at guesses of the pattern leave their targets untouched and are
 * not removed; the cache itself is written whole, readable by the owner only.
 */
import { lstat, readdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { LastGoodFile } from '../../address-books/lib/last-good.ts';
import { tempDir } from '../harness/router.ts';

it('a symlink planted at the temporary name is never followed; its target stays untouched', async () => {
  const dir = await tempDir();
  const victim = join(dir, 'victim.conf');
  await writeFile(victim, 'precious\n', { mode: 0o644 });
  const cache = join(dir, 'routes.last-good.json');
  // The old predictable name, its neighbours, and the shapes a guesser would try.
  const guesses = [
    `${cache}.${process.pid}.tmp`,
    `${cache}.${process.pid + 1}.tmp`,
    `${cache}.tmp`,
    `${cache}.0.tmp`,
    `${cache}.0000000000000000.tmp`,
  ];
  for (const g of guesses) await symlink(victim, g);

  const f = new LastGoodFile(cache, { book: 'etcd', source: 'prefix /s/' }, pino({ level: 'silent' }), 'x');
  for (let i = 0; i < 3; i++) {
    f.save({ hosts: { 'a.test': 'p' }, round: i });
    await f.flushed();
  }

  expect(await readFile(victim, 'utf8')).toBe('precious\n');
  expect((await stat(victim)).mode & 0o777).toBe(0o644);
  for (const g of guesses) expect(await readlink(g)).toBe(victim);
  expect((await lstat(cache)).isFile()).toBe(true);
  expect((await stat(cache)).mode & 0o777).toBe(0o600);
  expect((await f.load())?.data).toEqual({ hosts: { 'a.test': 'p' }, round: 2 });
  // No temporary file is left behind, and none but the planted ones exist.
  const left = (await readdir(dir)).filter((n) => n.endsWith('.tmp')).map((n) => join(dir, n));
  expect(left.sort()).toEqual([...guesses].sort());
});

it('a symlink planted at the cache path itself is replaced, not written through', async () => {
  const dir = await tempDir();
  const victim = join(dir, 'victim.conf');
  await writeFile(victim, 'precious\n');
  const cache = join(dir, 'c.json');
  await symlink(victim, cache);
  const f = new LastGoodFile(cache, { book: 'etcd', source: 's' }, pino({ level: 'silent' }), 'x');
  f.save({ a: 1 });
  await f.flushed();
  expect(await readFile(victim, 'utf8')).toBe('precious\n');
  expect((await lstat(cache)).isFile()).toBe(true);
});
