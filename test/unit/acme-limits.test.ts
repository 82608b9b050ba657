/**
 * What an `acme:` section may order (issue 39 item 5): `domains` (a name equal to or under a
 * registered domain, on a label boundary), `maxNames` (held names kept before new ones from the
 * book), `maxOrdersPerHour` (a sliding hour), and the schema's refusals naming their paths.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { OrderBudget } from '../../app/acme/budget.ts';
import { checkAcme } from '../../app/acme/check.ts';
import { chooseNames, PRIORITY, underDomain } from '../../app/acme/select.ts';
import { validateConfig } from '../../app/load-config.ts';
import { tempDir } from '../harness/router.ts';

const BOOK = {
  name: 'bfe',
  products: { p: { hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
  clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } } },
};
const https = (acme: Record<string, unknown>) => ({
  name: 'https',
  address: '127.0.0.1:0',
  tls: 'terminate',
  acme: { directory: 'https://acme.test/dir', storage: 'acme', ...acme },
});
const load = (acme: Record<string, unknown>) =>
  validateConfig({ addressBook: BOOK, listeners: [https(acme)] }, '/x/switchboard.yaml', '');

describe('acme name limits', () => {
  it.each([
    ['example.com', 'example.com', true],
    ['www.example.com', 'example.com', true],
    ['a.b.example.com', 'example.com', true],
    ['xexample.com', 'example.com', false],
    ['example.com.evil.test', 'example.com', false],
    ['example.org', 'example.com', false],
  ])('underDomain(%s, %s) = %s', (name, domain, want) => {
    expect(underDomain(name, domain)).toBe(want);
  });

  it('book names: outside domains skipped, held names before new ones, past maxNames skipped', () => {
    const r = chooseNames({
      configured: undefined,
      book: ['a.good.test', 'b.good.test', 'c.good.test', 'evil.other.test', 'z.good.test'],
      held: new Set(['z.good.test']),
      domains: ['good.test'],
      maxNames: 2,
    });
    expect(r.names).toEqual([
      { name: 'z.good.test', priority: PRIORITY.held },
      { name: 'a.good.test', priority: PRIORITY.new },
    ]);
    expect(r.skipped).toEqual([
      { name: 'evil.other.test', reason: 'domains' },
      { name: 'b.good.test', reason: 'maxNames' },
      { name: 'c.good.test', reason: 'maxNames' },
    ]);
  });

  it('configured names are the list (the book is not read) and rank first', () => {
    const r = chooseNames({
      configured: ['own.example.com'],
      book: ['a.example.com'],
      held: new Set(),
      domains: undefined,
      maxNames: 100,
    });
    expect(r).toEqual({ names: [{ name: 'own.example.com', priority: PRIORITY.configured }], skipped: [] });
  });

  it('maxOrdersPerHour: a sliding hour', () => {
    const b = new OrderBudget();
    const t0 = 1_000_000;
    expect(b.nextAt(t0, 2)).toBe(t0);
    b.take(t0);
    b.take(t0 + 60_000);
    expect(b.nextAt(t0 + 120_000, 2)).toBe(t0 + 3_600_000);
    expect(b.nextAt(t0 + 3_600_000, 2)).toBe(t0 + 3_600_000);
    b.take(t0 + 3_600_000);
    expect(b.nextAt(t0 + 3_600_001, 2)).toBe(t0 + 60_000 + 3_600_000);
    // A lower limit after a reload counts the same window.
    expect(b.nextAt(t0 + 3_600_001, 1)).toBe(t0 + 3_600_000 + 3_600_000);
  });

  it('defaults: 100 names, 20 orders an hour, no domain allowlist', async () => {
    const acme = (await load({})).config.listeners[0]!.acme!;
    expect([acme.maxNames, acme.maxOrdersPerHour, acme.domains]).toEqual([100, 20, undefined]);
  });

  it.each([
    [{ maxNames: 0 }, /listeners\[0\]\.acme\.maxNames/],
    [{ maxOrdersPerHour: 1.5 }, /listeners\[0\]\.acme\.maxOrdersPerHour/],
    [{ domains: [] }, /listeners\[0\]\.acme\.domains/],
    [{ domains: ['not a domain'] }, /listeners\[0\]\.acme\.domains\[0\]/],
    [
      { names: ['a.test', 'b.test'], maxNames: 1 },
      /listeners\[0\]\.acme\.names: 2 names, more than acme\.maxNames \(1\)/,
    ],
    [
      { names: ['ok.example.com', 'evil.test'], domains: ['example.com'] },
      /listeners\[0\]\.acme\.names\[1\]: evil\.test is not under acme\.domains/,
    ],
  ])('schema refuses %j', async (acme, want) => {
    await expect(load(acme)).rejects.toThrow(want);
  });

  it('check: a storage whose certs is not a directory fails, naming the key', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'certs'), 'x');
    const file = join(dir, 'switchboard.yaml');
    await writeFile(file, stringify({ addressBook: BOOK, listeners: [https({})] }));
    const loaded = await validateConfig(parse(await readFile(file, 'utf8')), file, '');
    expect(await checkAcme(loaded)).toEqual([
      `listeners[0].acme.storage: ${join(dir, 'acme', 'certs')} is not a directory`,
    ]);
  });
});
