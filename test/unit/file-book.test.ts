import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileAddressBook } from '../../address-books/file/book.ts';
import { buildMatcher } from '../../address-books/file/matcher.ts';
import { parseEntries } from '../../address-books/file/parse.ts';
import { createLogger } from '../../src/base/log.ts';
import { seededRandom } from '../../src/base/random.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { addressBookConformance, requestFor } from '../conformance/address-book.ts';

const context = (dir: string) => ({
  configDir: dir,
  registry: new LocalRegistry(),
  logger: createLogger('silent'),
  random: seededRandom(1),
});

for (const [ext, initial, updated] of [
  ['yaml', '- { host: a.test, backends: [127.0.0.1:9001] }\n', '- { host: a.test, backends: [127.0.0.1:9002] }\n'],
  ['json', '[{"host":"a.test","backends":["127.0.0.1:9001"]}]', '[{"host":"a.test","backends":["127.0.0.1:9002"]}]'],
  ['csv', 'host,path,backends\na.test,,127.0.0.1:9001\n', 'host,path,backends\na.test,,127.0.0.1:9002\n'],
] as const) {
  addressBookConformance(`file (${ext})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'swb-file-'));
    const path = join(dir, `servers.${ext}`);
    await writeFile(path, initial);
    const book = fileAddressBook.create(fileAddressBook.options.parse({ path: `servers.${ext}` }), context(dir));
    return {
      book,
      update: () => writeFile(path, updated),
      breakSource: () =>
        writeFile(path, ext === 'csv' ? 'host,path\nbroken' : '- { host: a.test, backends: [nope] }\n'),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  });
}

describe('file book matching (DESIGN: most specific host, then longest path prefix)', () => {
  const entries = parseEntries(
    `
- { host: subscriber1.mysite.test, backends: [127.0.0.1:3000, 127.0.0.1:3001] }
- { host: "*.mysite.test", path: /api, backends: [127.0.0.1:3002] }
- { host: "*.deep.mysite.test", backends: [127.0.0.1:3004] }
- { host: "*", backends: [127.0.0.1:3003] }
- { host: "*", path: /static/, backends: [127.0.0.1:3005] }
`,
    'servers.yaml',
  );
  const m = buildMatcher(entries);
  const cases: [string, string | undefined, string | undefined][] = [
    ['subscriber1.mysite.test', '/', '127.0.0.1:3000'],
    ['subscriber1.mysite.test', '/api/x', '127.0.0.1:3000'],
    ['other.mysite.test', '/api', '127.0.0.1:3002'],
    ['other.mysite.test', '/api/v1', '127.0.0.1:3002'],
    ['other.mysite.test', '/apix', '127.0.0.1:3003'],
    ['a.b.mysite.test', '/api', '127.0.0.1:3002'],
    ['x.deep.mysite.test', '/api', '127.0.0.1:3004'],
    ['mysite.test', '/api', '127.0.0.1:3003'],
    ['elsewhere.test', '/static/a.css', '127.0.0.1:3005'],
    ['elsewhere.test', '/static', '127.0.0.1:3003'],
    ['elsewhere.test', undefined, '127.0.0.1:3003'],
  ];
  it.each(cases)('%s %s → %s', (host, path, want) => {
    const c = m.match(host, path);
    expect(c?.subclusters[0]?.backends[0]?.id).toBe(want);
  });

  it('applies cluster defaults to every entry', () => {
    const c = m.match('elsewhere.test', '/')!;
    expect(c.policy.retries).toBe(2);
    expect(c.policy.balance).toBe('wrr');
    expect(c.subclusters[0]!.backends[0]!.weight).toBe(1);
  });

  it.each([
    ['- { host: "a b", backends: [127.0.0.1:1] }', 'expected a host name'],
    ['- { host: a.test, backends: [] }', 'backends'],
    ['- { host: a.test, backends: ["127.0.0.1:99999"] }', 'expected host:port'],
    ['- { host: a.test, backends: [127.0.0.1:1], colour: red }', 'colour: unknown key'],
    ['- { host: a.test, backends: [127.0.0.1:1] }\n- { host: a.test, backends: [127.0.0.1:2] }', 'duplicate host'],
  ])('rejects %s', (text, message) => {
    expect(() => parseEntries(text, 'x.yaml')).toThrow(message);
  });

  it('answers a request built the panel way', () => {
    expect(m.match(requestFor('subscriber1.mysite.test').host, '/')?.product).toBe('subscriber1.mysite.test');
  });
});
