/**
 * Every place the router reads a file a user names goes through src/base/safe-file.ts (issue 39
 * item 7): the config file, a book's `path` / `routes` file, a BFE conf dir's files, an import
 * source and a last-good cache. With a FIFO at the path each answers at once with an error naming
 * the option, the path and what it is (a blocking read would wait for a writer forever); with a
 * symlink to /dev/zero each refuses without reading.
 */
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { loadBfeDir } from '../../address-books/bfe/bfe-json.ts';
import { LastGoodFile } from '../../address-books/lib/last-good.ts';
import { readSourceBytes, readSourceFile } from '../../address-books/lib/read-source.ts';
import { loadImportSource } from '../../address-books/sqlite/import-source.ts';
import { loadConfig } from '../../app/load-config.ts';
import { tempDir } from '../harness/router.ts';
import { mkfifo, releaseFifoReaders, within } from '../harness/special-files.ts';

const fifos: string[] = [];
afterEach(() => {
  for (const f of fifos.splice(0)) releaseFifoReaders(f);
});

/** The message `fn` fails with, within 10 s. */
async function failure(fn: () => Promise<unknown>, what: string): Promise<string> {
  const outcome = await within(
    fn().then(
      () => 'resolved',
      (e: unknown) => (e as { errors?: string[] }).errors?.join('; ') ?? (e as Error).message,
    ),
    10_000,
    what,
  );
  return outcome;
}

it.each(['fifo', 'zero'] as const)('%s: every user-named file is refused at once, naming where and what', async (k) => {
  const dir = await tempDir();
  const plant = async (path: string) => {
    if (k === 'fifo') {
      mkfifo(path);
      fifos.push(path);
    } else await symlink('/dev/zero', path);
  };
  const what = k === 'fifo' ? 'a FIFO, not a regular file' : 'a character device, not a regular file';
  for (const name of ['switchboard.yaml', 'servers.yaml', 'routes.json', 'cache.json']) await plant(join(dir, name));
  const bfe = join(dir, 'bfe');
  await mkdir(join(bfe, 'server_data_conf'), { recursive: true });
  await plant(join(bfe, 'host_rule.data'));

  const p = (n: string) => join(dir, n);
  expect(await failure(() => loadConfig(p('switchboard.yaml')), 'config')).toBe(
    `cannot read ${p('switchboard.yaml')}: ${what}`,
  );
  expect(await failure(() => readSourceFile(p('servers.yaml'), 'addressBook.path'), 'file book')).toBe(
    `addressBook.path: cannot read ${p('servers.yaml')}: ${what}`,
  );
  expect(await failure(() => readSourceBytes(p('routes.json'), 'addressBook.routes'), 'routes')).toBe(
    `addressBook.routes: cannot read ${p('routes.json')}: ${what}`,
  );
  expect(await failure(() => loadBfeDir(bfe), 'bfe dir')).toBe(
    `bfe config: host_rule.data: cannot read ${join(bfe, 'host_rule.data')}: ${what}`,
  );
  expect(await failure(() => loadImportSource(p('servers.yaml')), 'import')).toContain(
    `cannot read ${p('servers.yaml')}: ${what}`,
  );
  const cache = new LastGoodFile(p('cache.json'), { book: 'x', source: 's' }, pino({ level: 'silent' }), 'x');
  expect(await failure(() => cache.load(), 'last-good')).toBe(
    `last-good cache ${p('cache.json')}: read: cannot read ${p('cache.json')}: ${what}`,
  );
});

it('a config file over 64 MiB is refused, naming the limit', async () => {
  const dir = await tempDir();
  // A sparse file: its size is what the check reads, nothing is written.
  await writeFile(join(dir, 'big.yaml'), '');
  await truncate(join(dir, 'big.yaml'), 64 * 1024 * 1024 + 1);
  expect(await failure(() => loadConfig(join(dir, 'big.yaml')), 'big config')).toBe(
    `cannot read ${join(dir, 'big.yaml')}: larger than 64 MiB (the limit for config files)`,
  );
});
