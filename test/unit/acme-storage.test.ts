/**
 * The ACME storage probe (issue 39 item 4): it proves every directory takes a file and leaves
 * nothing behind; `certs` that is not a directory is refused with a typed error naming it; a
 * storage directory that is a symlink the operator made is followed (the probe file never is).
 */
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AcmeStorage } from '../../app/acme/storage.ts';
import { tempDir } from '../harness/router.ts';

describe('acme storage probe', () => {
  it('creates the directories, writes in each, leaves nothing behind', async () => {
    const dir = join(await tempDir(), 'acme');
    await new AcmeStorage(dir).probe();
    expect(await readdir(dir)).toEqual(['certs']);
    expect(await readdir(join(dir, 'certs'))).toEqual([]);
  });

  it('certs as a file: SWB_ERR_ACME_STORAGE naming it', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'certs'), 'x');
    await expect(new AcmeStorage(join(dir, 'acme')).probe()).rejects.toMatchObject({
      code: 'SWB_ERR_ACME_STORAGE',
      message: `acme storage: ${join(dir, 'acme', 'certs')} is not a directory`,
    });
  });

  it('a storage directory that is a symlink to a directory is used', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'acme'));
    await new AcmeStorage(join(dir, 'acme')).probe();
    expect(await readdir(join(dir, 'real'))).toEqual(['certs']);
  });

  it('a failed save removes its temporary file and nothing else', async () => {
    const dir = join(await tempDir(), 'acme');
    const storage = new AcmeStorage(dir);
    await storage.open();
    await mkdir(join(dir, 'certs', 'a.test.key'));
    await expect(storage.save('a.test', 'cert', 'key')).rejects.toMatchObject({ code: 'SWB_ERR_ACME_STORAGE' });
    expect(await readdir(join(dir, 'certs'))).toEqual(['a.test.key']);
  });
});
