/**
 * TLS config: bad certificates, keys and CA files are config errors naming their path; name
 * matching for certificates (exact, one-label wildcard, default; RFC 6125 §6.4.3).
 */
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../app/load-config.ts';
import { certificateNames, NameTable } from '../../src/tls/names.ts';
import { type CertPair, createPki, type Pki } from '../harness/certs.ts';
import { startTestRouter } from '../harness/router.ts';

const book = (tls?: Record<string, unknown>) => ({
  name: 'bfe',
  products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
  clusters: {
    c: {
      ...(tls === undefined ? {} : { tls }),
      subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } },
    },
  },
});

const terminate = (extra: Record<string, unknown>) => [
  { name: 'tls', address: '127.0.0.1:0', tls: 'terminate', ...extra },
];

describe('tls config errors', () => {
  let pki: Pki;
  let www: CertPair;
  let api: CertPair;

  beforeAll(async () => {
    pki = await createPki();
    www = await pki.leaf('www', { dns: ['www.example.test'] });
    api = await pki.leaf('api', { dns: ['*.api.test'] });
    await writeFile(join(pki.dir, 'garbage.crt'), 'not a certificate\n');
  });
  afterAll(() => pki.close());

  it.each([
    [{ listeners: terminate({}) }, /listeners\[0\]\.certificates: tls terminate needs at least one certificate/],
    [
      { listeners: [{ name: 'x', address: '127.0.0.1:0', certificates: [{ cert: 'a', key: 'b' }] }] },
      /listeners\[0\]\.certificates: certificates need tls: terminate/,
    ],
    [
      { listeners: [{ name: 'x', address: '127.0.0.1:0', tls: 'passthrough', clientAuth: { ca: 'ca.crt' } }] },
      /listeners\[0\]\.clientAuth: clientAuth needs tls: terminate/,
    ],
    [
      { listeners: terminate({ certificates: [{ cert: 'a', key: 'b', colour: 1 }] }) },
      /listeners\[0\]\.certificates\[0\]\.colour: unknown key/,
    ],
  ])('schema: %#', async (config, want) => {
    await expect(validateConfig({ addressBook: book(), ...config }, '/x/switchboard.yaml', '')).rejects.toThrow(want);
  });

  it.each([
    [
      'a missing cert file',
      { certificates: [{ cert: 'nope.crt', key: 'www.key' }] },
      /listeners\[0\]\.certificates\[0\]\.cert: file not found: .*nope\.crt/,
    ],
    [
      'a file that is not PEM',
      { certificates: [{ cert: 'garbage.crt', key: 'www.key' }] },
      /listeners\[0\]\.certificates\[0\]\.cert: not a PEM certificate/,
    ],
    [
      'a key that does not match its certificate',
      {
        certificates: [
          { cert: 'www.crt', key: 'www.key' },
          { cert: 'api.crt', key: 'www.key' },
        ],
      },
      /listeners\[0\]\.certificates\[1\]\.key: cannot use with api\.crt/,
    ],
    [
      'a missing client CA',
      { certificates: [{ cert: 'www.crt', key: 'www.key' }], clientAuth: { ca: 'none.crt' } },
      /listeners\[0\]\.clientAuth\.ca: file not found: /,
    ],
    [
      'a client CA that is not PEM',
      { certificates: [{ cert: 'www.crt', key: 'www.key' }], clientAuth: { ca: 'garbage.crt' } },
      /listeners\[0\]\.clientAuth\.ca: no PEM certificate/,
    ],
  ])('engine build fails on %s, naming the path', async (_what, listener, want) => {
    await expect(
      startTestRouter({ listeners: terminate(listener), addressBook: book() }, { dir: pki.dir }),
    ).rejects.toThrow(want);
  });

  it('a cluster tls.ca that cannot be read fails the engine build', async () => {
    await expect(startTestRouter({ addressBook: book({ ca: 'missing-ca.crt' }) }, { dir: pki.dir })).rejects.toThrow(
      /tls\.ca: file not found: .*missing-ca\.crt/,
    );
  });

  it('a valid terminate listener starts (paths relative to the config directory)', async () => {
    const r = await startTestRouter(
      {
        listeners: terminate({ certificates: [{ cert: 'www.crt', key: 'www.key', names: ['Other.Test'] }] }),
        addressBook: book(),
      },
      { dir: pki.dir },
    );
    expect(r.router.runtime.engine.tls.listeners.get('tls')?.store.default?.names).toEqual(['other.test']);
    await r.close();
  });

  it('names come from the SAN DNS entries, else the CN', async () => {
    expect(certificateNames(new X509Certificate(www.certPem))).toEqual(['www.example.test']);
    expect(certificateNames(new X509Certificate(api.certPem))).toEqual(['*.api.test']);
    const noSan = await pki.leaf('nosan', { cn: 'Only.CN.test' });
    expect(certificateNames(new X509Certificate(noSan.certPem))).toEqual(['only.cn.test']);
  });
});

describe('certificate name table', () => {
  const t = new NameTable('default');
  t.add('www.example.test', 'www');
  t.add('*.example.test', 'wild');
  t.add('*.example.test', 'second wildcard loses');
  t.add('API.Example.Test', 'api');

  it.each([
    ['www.example.test', 'www', 'exact'],
    ['WWW.EXAMPLE.TEST', 'www', 'case-insensitive (RFC 6066 §3)'],
    ['api.example.test', 'api', 'exact beats wildcard'],
    ['shop.example.test', 'wild', 'one-label wildcard'],
    ['a.shop.example.test', 'default', 'a wildcard covers one label only (RFC 6125 §6.4.3)'],
    ['example.test', 'default', 'a wildcard does not cover the bare suffix'],
    ['other.test', 'default', 'no match → default'],
  ])('%s → %s (%s)', (name, want) => {
    expect(t.lookup(name)).toBe(want);
  });
});
