import { describe, expect, it } from 'vitest';
import { BasicRuleTree, type PathTarget, parsePathPattern } from '../../address-books/bfe/basic-rules.ts';
import { normaliseConfigHost } from '../../address-books/bfe/host-table.ts';

/** A tree from [host, path, cluster] rules; each target's `cluster` is what the test reads. */
function tree(rules: readonly (readonly [string, string, string])[]): BasicRuleTree {
  const t = new BasicRuleTree();
  for (const [host, path, cluster] of rules) {
    const h = normaliseConfigHost(host);
    const key = parsePathPattern(path);
    if ('error' in h || typeof key === 'string') throw new Error(`bad rule ${host} ${path}`);
    const target: PathTarget = { pattern: path, cluster, rule: cluster, candidates: undefined };
    expect(t.pathsFor(h.host).add(key, target)).toBeUndefined();
  }
  return t;
}

// Source: reference bfe.md §2.3 (BFE basic_rule_tree_test.go). Rule set, request host, path, result.
type Rules = readonly (readonly [string, string, string])[];
type Row = readonly [string, Rules, string, string | undefined, string | undefined];
const rows: readonly Row[] = [
  ['host * matches any', [['*', '*', 'c']], 'any', '/foo', 'c'],
  ['host * matches any', [['*', '*', 'c']], 'bar.foo.com', '/foo', 'c'],
  ['host *.com one label', [['*.com', '*', 'c']], 'foo.com', '/', 'c'],
  ['host *.com one label only', [['*.com', '*', 'c']], 'bar.foo.com', '/', undefined],
  ['host *.foo.com', [['*.foo.com', '*', 'c']], 'bar.foo.com', '/', 'c'],
  ['host *.foo.com vs foo.com', [['*.foo.com', '*', 'c']], 'foo.com', '/', undefined],
  ['path *', [['*', '*', 'c']], 'h', '/foo', 'c'],
  ['path * without leading slash', [['*', '*', 'c']], 'h', 'foo', 'c'],
  ['path / exact', [['*', '/', 'c']], 'h', '/', 'c'],
  ['path / exact', [['*', '/', 'c']], 'h', '/foo', undefined],
  ['path /* prefix', [['*', '/*', 'c']], 'h', '/', 'c'],
  ['path /* prefix', [['*', '/*', 'c']], 'h', '/foo', 'c'],
  ['path /* prefix', [['*', '/*', 'c']], 'h', '/foo/bar', 'c'],
  ['path /* prefix', [['*', '/*', 'c']], 'h', 'foo', undefined],
  ['path /foo exact', [['*', '/foo', 'c']], 'h', '/foo', 'c'],
  ['path /foo exact', [['*', '/foo', 'c']], 'h', '/foobar', undefined],
  ['path /foo exact', [['*', '/foo', 'c']], 'h', '/foo/', undefined],
  ['path /foo exact', [['*', '/foo', 'c']], 'h', '/bar', undefined],
  ['path /foo/ exact', [['*', '/foo/', 'c']], 'h', '/foo/', 'c'],
  ['path /foo/ exact', [['*', '/foo/', 'c']], 'h', '/foo', undefined],
  ['path /foo* element prefix', [['*', '/foo*', 'c']], 'h', '/foo', 'c'],
  ['path /foo* element prefix', [['*', '/foo*', 'c']], 'h', '/foo/', 'c'],
  ['path /foo* element prefix', [['*', '/foo*', 'c']], 'h', '/foo/bar', 'c'],
  ['path /foo* element prefix', [['*', '/foo*', 'c']], 'h', '/foobar', undefined],
  ['path /foo/* ≡ /foo*', [['*', '/foo/*', 'c']], 'h', '/foo', 'c'],
  ['path /aaa/bb*', [['*', '/aaa/bb*', 'c']], 'h', '/aaa/bbb', undefined],
  ['path /aaa/bbb*', [['*', '/aaa/bbb*', 'c']], 'h', '/aaa/bbb', 'c'],
  ['path /aaa/bbb*', [['*', '/aaa/bbb*', 'c']], 'h', '/aaa/bbb/', 'c'],
  ['path /aaa/bbb*', [['*', '/aaa/bbb*', 'c']], 'h', '/aaa/bbb/xyz', 'c'],
  ['path /aaa/bbb*', [['*', '/aaa/bbb*', 'c']], 'h', '/aaa/bbbxyz', undefined],
  ...(['/aaa/ccc:c2', '/aaa/bbb:c3', '/ccc:c1'] as const).map((s) => {
    const [path, want] = s.split(':') as [string, string];
    const rules = [
      ['*', '/*', 'c1'],
      ['*', '/aaa*', 'c2'],
      ['*', '/aaa/bbb*', 'c3'],
    ] as const;
    return ['longest prefix', rules, 'h', path, want] satisfies Row;
  }),
  [
    'exact wins over prefix',
    [
      ['*', '/foo', 'c1'],
      ['*', '/foo*', 'c2'],
    ],
    'h',
    '/foo',
    'c1',
  ],
  // bfe.md §4.2a: once a host node is chosen, no fallback to less specific hosts.
  [
    'no host fallback',
    [
      ['a.foo.com', '/x', 'c1'],
      ['*.foo.com', '*', 'c2'],
      ['*', '*', 'c3'],
    ],
    'a.foo.com',
    '/y',
    undefined,
  ],
  [
    'exact host before wildcard',
    [
      ['a.foo.com', '*', 'c1'],
      ['*.foo.com', '*', 'c2'],
    ],
    'a.foo.com',
    '/',
    'c1',
  ],
  [
    'wildcard before bare *',
    [
      ['a.foo.com', '*', 'c1'],
      ['*.foo.com', '*', 'c2'],
      ['*', '*', 'c3'],
    ],
    'b.foo.com',
    '/',
    'c2',
  ],
  [
    'deep host falls to bare *',
    [
      ['*.foo.com', '*', 'c2'],
      ['*', '*', 'c3'],
    ],
    'x.b.foo.com',
    '/',
    'c3',
  ],
  ['TLS (no path): bare * path matches', [['h', '*', 'c']], 'h', undefined, 'c'],
  ['TLS (no path): path rules do not', [['h', '/*', 'c']], 'h', undefined, undefined],
];

describe('bfe basic rule tree (reference bfe.md §2.3)', () => {
  it.each(rows)('%s: %j ← %s %s', (_src, rules, host, path, want) => {
    expect(tree(rules).lookup(host, path)?.cluster).toBe(want);
  });

  it.each([
    ['', 'empty'],
    ['/a/*/*', 'last character'],
    ['/a*/b', 'last character'],
  ])('bfe.md §2.3 loader rows: path %j is rejected', (raw, word) => {
    expect(parsePathPattern(raw)).toMatch(word);
  });

  it('reports a duplicate path under the same host (bfe.md §3.3)', () => {
    const t = tree([['h', '/foo*', 'c1']]);
    const key = parsePathPattern('/foo/*');
    if (typeof key === 'string') throw new Error(key);
    expect(
      t.pathsFor('h').add(key, { pattern: '/foo/*', cluster: 'c2', rule: 'c2', candidates: undefined })?.cluster,
    ).toBe('c1');
  });
});
