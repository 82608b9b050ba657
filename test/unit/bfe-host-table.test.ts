import { describe, expect, it } from 'vitest';
import { type HostEntry, HostTable, normaliseConfigHost } from '../../address-books/bfe/host-table.ts';

function table(patterns: readonly string[]): HostTable {
  const t = new HostTable();
  for (const p of patterns) {
    const n = normaliseConfigHost(p);
    if ('error' in n) throw new Error(n.error);
    t.add(n.host, { product: p, via: 'host', tag: undefined, pattern: n.host, where: p } satisfies HostEntry);
  }
  return t;
}

// Each row: configured patterns, request host, the pattern expected to win (undefined = no match).
const rows: readonly [string, readonly string[], string, string | undefined][] = [
  ['bfe.md §2.3 host-table trie', ['www.baidu.com', '*.baidu.com'], 'www.baidu.com', 'www.baidu.com'],
  ['bfe.md §2.3 host-table trie', ['www.baidu.com', '*.baidu.com'], '100.baidu.com', '*.baidu.com'],
  ['bfe.md §2.3 host-table trie', ['www.baidu.com', '*.baidu.com'], '100.1baidu.com', undefined],
  ['bfe.md §4.1 wildcard matches any depth', ['*.example.com'], 'a.b.example.com', '*.example.com'],
  ['bfe.md §4.1 wildcard does not match its own suffix', ['*.example.com'], 'example.com', undefined],
  ['bfe.md §4.1 deepest wildcard wins', ['*.example.com', '*.b.example.com'], 'a.b.example.com', '*.b.example.com'],
  ['bfe.md §4.1 deepest wildcard wins', ['*.example.com', '*.b.example.com'], 'a.c.example.com', '*.example.com'],
  ['bfe.md §4.1 exact beats wildcard', ['*.example.com', 'a.example.com'], 'a.example.com', 'a.example.com'],
  [
    'bfe.md §4.1 deeper exact miss falls back to splat',
    ['*.example.com', 'x.a.example.com'],
    'a.example.com',
    '*.example.com',
  ],
  ['bfe.md §4.1 bare * is a catch-all', ['*', 'www.example.com'], 'other.test', '*'],
  ['bfe.md §4.1 bare * is a catch-all', ['*'], '', '*'],
  ['bfe.md §4.1 specific wildcard before bare *', ['*', '*.example.com'], 'a.example.com', '*.example.com'],
  ['bfe.md §3.1 config hosts lower-cased', ['WWW.Example.COM'], 'www.example.com', 'WWW.Example.COM'],
  ['bfe.md §4.1 trailing dot FQDN', ['www.example.com.'], 'www.example.com', 'www.example.com.'],
  ['no entry', ['www.example.com'], 'example.com', undefined],
  ['IPv6 literal host', ['[::1]'], '[::1]', '[::1]'],
];

describe('bfe host table', () => {
  it.each(rows)('%s: %j ← %s', (_src, patterns, host, want) => {
    expect(table(patterns).lookup(host)?.product).toBe(want);
  });

  it('reports a duplicate instead of replacing it', () => {
    const t = table(['a.test']);
    const clash = t.add('a.test', { product: 'p2', via: 'host', tag: undefined, pattern: 'a.test', where: 'x' });
    expect(clash?.product).toBe('a.test');
    expect(t.lookup('a.test')?.product).toBe('a.test');
  });

  it.each([
    ['', 'empty'],
    ['www.example.com:80', 'port'],
    ['[::1]:80', 'port'],
    ['*abc.a.com', 'wildcard'],
    ['abc*.a.com', 'wildcard'],
    ['*.*.a.com', 'wildcard'],
    ['a.*.com', 'wildcard'],
  ])('bfe.md §2.3 loader rows: config host %j is rejected (%s)', (raw, word) => {
    const n = normaliseConfigHost(raw);
    expect('error' in n && n.error).toMatch(word);
  });
});
