/**
 * The fleet's ACME key (issue 43 item 2): AES-256-GCM sealing bound to the etcd key (another
 * key or another name does not open it), the 32-byte base64 key from the config or a file, and
 * `switchboard check` refusing `fleet:` with `acme:` and no key, naming `fleet.encryptionKey`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAcme } from '../../app/acme/check.ts';
import { KeySealer, loadEncryptionKey, parseEncryptionKey } from '../../app/acme/fleet-crypto.ts';
import { validateConfig } from '../../app/load-config.ts';
import { tempDir } from '../harness/router.ts';

const KEY = Buffer.alloc(32, 1);
const PEM =
  '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n';

const BOOK = {
  name: 'bfe',
  products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
  clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } } },
};
const fleetConfig = (fleet: Record<string, unknown>, acme = true) => ({
  addressBook: BOOK,
  listeners: [
    acme
      ? {
          name: 'https',
          address: '127.0.0.1:0',
          tls: 'terminate',
          acme: { directory: 'https://acme.test/dir', names: ['a.test'], storage: 'acme' },
        }
      : { name: 'web', address: '127.0.0.1:0' },
  ],
  fleet: { etcd: { endpoints: ['http://127.0.0.1:2379'] }, ...fleet },
});

describe('acme across a fleet: the encryption key', () => {
  it('seals a key into something that is not PEM, and opens it back under the same name only', () => {
    const sealer = new KeySealer(KEY);
    const sealed = sealer.seal(PEM, 'acme/certs/a.test');
    expect(sealed).toMatch(/^aes-256-gcm:/);
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(sealer.seal(PEM, 'acme/certs/a.test')).not.toBe(sealed);
    expect(sealer.open(sealed, 'acme/certs/a.test')).toBe(PEM);
    expect(() => sealer.open(sealed, 'acme/certs/b.test')).toThrow(/cannot decrypt/);
    expect(() => new KeySealer(Buffer.alloc(32, 2)).open(sealed, 'acme/certs/a.test')).toThrow(
      expect.objectContaining({ code: 'SWB_ERR_ACME_STORAGE' }),
    );
    expect(() => sealer.open(PEM, 'acme/certs/a.test')).toThrow(/not an encrypted value/);
  });

  it.each([
    [KEY.toString('base64'), true],
    [`  ${KEY.toString('base64url')}\n`, true],
    [Buffer.alloc(16).toString('base64'), 'expected 32 bytes, base64 decodes to 16'],
    ['not base64!', 'expected base64'],
  ])('parseEncryptionKey(%j)', (text, want) => {
    const got = parseEncryptionKey(text);
    if (want === true) expect(got).toEqual(KEY);
    else expect(got).toBe(want);
  });

  it('reads the key from fleet.encryptionKeyFile, relative to the config directory', async () => {
    const dir = await tempDir({ 'fleet.key': `${KEY.toString('base64')}\n` });
    expect(loadEncryptionKey({ encryptionKeyFile: 'fleet.key' }, dir)).toEqual(KEY);
    expect(() => loadEncryptionKey({ encryptionKeyFile: 'missing.key' }, dir)).toThrow(
      /^fleet\.encryptionKeyFile: .*missing\.key: cannot read/,
    );
    expect(loadEncryptionKey({}, dir)).toBeUndefined();
  });

  it('check refuses fleet: with acme: and no key, naming fleet.encryptionKey; a bad key too', async () => {
    const dir = await tempDir();
    const file = join(dir, 'switchboard.yaml');
    const check = async (config: Record<string, unknown>) => checkAcme(await validateConfig(config, file, ''));
    expect(await check(fleetConfig({}))).toEqual([
      'fleet.encryptionKey: required with listeners[0].acme (ACME keys are kept in etcd encrypted): set fleet.encryptionKey or fleet.encryptionKeyFile (32 bytes, base64)',
    ]);
    expect(await check(fleetConfig({ encryptionKey: 'c2hvcnQ=' }))).toEqual([
      'fleet.encryptionKey: expected 32 bytes, base64 decodes to 5',
    ]);
    expect(await check(fleetConfig({ encryptionKey: KEY.toString('base64') }))).toEqual([]);
    await writeFile(join(dir, 'fleet.key'), KEY.toString('base64'));
    expect(await check(fleetConfig({ encryptionKeyFile: 'fleet.key' }))).toEqual([]);
    // Without acme: the key is not needed; both keys at once are refused by the schema.
    expect(await check(fleetConfig({}, false))).toEqual([]);
    await expect(
      validateConfig(fleetConfig({ encryptionKey: KEY.toString('base64'), encryptionKeyFile: 'fleet.key' }), file, ''),
    ).rejects.toThrow(/fleet\.encryptionKeyFile: set encryptionKey or encryptionKeyFile, not both/);
  });
});
