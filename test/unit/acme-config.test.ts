/**
 * The `acme:` section (issue 21): the schema refuses what cannot work (wrong listener mode,
 * http-01 without a plaintext listener, bad values), `switchboard check` refuses unreadable CA
 * files, non-https directories and storage it cannot create; a good section passes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { validateConfig } from '../../app/load-config.ts';
import { runCheck } from '../../cli/check.ts';
import { tempDir } from '../harness/router.ts';

const BOOK = {
  name: 'bfe',
  products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
  clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } } },
};
const ACME = { directory: 'https://acme.test/dir', storage: 'acme' };
const https = (acme: Record<string, unknown>, tls = 'terminate') => ({
  name: 'https',
  address: '127.0.0.1:0',
  tls,
  acme,
});

async function check(config: Record<string, unknown>, files: Record<string, string> = {}) {
  const dir = await tempDir(files);
  const file = join(dir, 'switchboard.yaml');
  await writeFile(file, stringify({ addressBook: BOOK, ...config }));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    const code = await runCheck(file);
    return { code, err: err.mock.calls.map((c) => String(c[0])).join(''), dir };
  } finally {
    err.mockRestore();
    out.mockRestore();
  }
}

describe('acme config', () => {
  it.each([
    [{ listeners: [https(ACME, 'off')] }, /listeners\[0\]\.acme: acme needs tls: terminate/],
    [
      { listeners: [https({ ...ACME, challenge: 'http-01' })] },
      /listeners\[0\]\.acme\.challenge: challenge http-01 needs a plaintext listener/,
    ],
    [{ listeners: [https({ ...ACME, challenge: 'dns-01' })] }, /listeners\[0\]\.acme\.challenge/],
    [
      { listeners: [https({ ...ACME, renewBefore: 'soon' })] },
      /listeners\[0\]\.acme\.renewBefore: expected a duration/,
    ],
    [{ listeners: [https({ ...ACME, names: ['a b'] })] }, /listeners\[0\]\.acme\.names\[0\]/],
    [{ listeners: [https({ ...ACME, colour: 1 })] }, /listeners\[0\]\.acme\.colour: unknown key/],
    [{ listeners: [https({ storage: 'x' })] }, /listeners\[0\]\.acme\.directory/],
  ])('schema: %#', async (config, want) => {
    await expect(validateConfig({ addressBook: BOOK, ...config }, '/x/switchboard.yaml', '')).rejects.toThrow(want);
  });

  it('an acme listener needs no certificate files; renewBefore takes days', async () => {
    const loaded = await validateConfig(
      { addressBook: BOOK, listeners: [https({ ...ACME, renewBefore: '30d' })] },
      '/x/switchboard.yaml',
      '',
    );
    expect(loaded.config.listeners[0]!.acme!.renewBefore).toBe(30 * 86_400_000);
    expect(loaded.config.listeners[0]!.acme!.challenge).toBe('tls-alpn-01');
  });

  it('check: a good section passes', async () => {
    const r = await check({ listeners: [https(ACME)] });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it('check: unreadable ca, http directory and storage that cannot be created fail, naming their keys', async () => {
    const r = await check(
      {
        listeners: [
          https({ directory: 'http://acme.test/dir', storage: 'file-not-dir', ca: 'missing.crt' }),
          { ...https({ ...ACME, storage: 'nowhere/deeper/acme', ca: 'not-pem.crt' }), name: 'b' },
        ],
      },
      { 'file-not-dir': 'x', 'not-pem.crt': 'x' },
    );
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/listeners\[0\]\.acme\.directory: expected an https:\/\/ URL/);
    expect(r.err).toMatch(/listeners\[0\]\.acme\.ca: cannot read .*missing\.crt/);
    expect(r.err).toMatch(/listeners\[0\]\.acme\.storage: .*file-not-dir is not a directory/);
    expect(r.err).toMatch(/listeners\[1\]\.acme\.ca: no PEM certificate/);
    expect(r.err).toMatch(/listeners\[1\]\.acme\.storage: .*does not exist/);
  });
});
