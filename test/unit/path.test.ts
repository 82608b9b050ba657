import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/errors.ts';
import { normalizePath } from '../../src/peek/path.ts';

// [input, expected normalised path, source]
const good: [string, string, string][] = [
  ['/', '/', 'RFC 3986 §3.3 path-absolute'],
  ['/a/b/c', '/a/b/c', 'RFC 3986 §3.3'],
  ['/a//b', '/a//b', 'RFC 3986 §3.3: empty segments are kept'],
  ['/a/./b', '/a/b', 'RFC 3986 §5.2.4 step 2B'],
  ['/a/b/../c', '/a/c', 'RFC 3986 §5.2.4 step 2C'],
  ['/a/b/..', '/a/', 'RFC 3986 §5.2.4 step 2C (final "..")'],
  ['/a/b/.', '/a/b/', 'RFC 3986 §5.2.4 step 2B (final ".")'],
  ['/a/..', '/', 'RFC 3986 §5.2.4'],
  ['/.', '/', 'RFC 3986 §5.2.4'],
  ['/a/.b/..c/...', '/a/.b/..c/...', 'RFC 3986 §5.2.4: only "." and ".." are dot-segments'],
  ['/a/%2E%2E/b', '/b', 'RFC 3986 §2.3 + §5.2.4: encoded dots are dots'],
  ['/a/%2e/b', '/a/b', 'RFC 3986 §2.3 (lower-case hex)'],
  ['/a/.%2e/b', '/b', 'RFC 3986 §2.3 + §5.2.4 (mixed)'],
  ['/%41%7A%30%2D%5F%7E', '/Az0-_~', 'RFC 3986 §2.3: unreserved escapes decoded'],
  ['/a%2Fb', '/a%2Fb', 'RFC 3986 §2.2: reserved escapes kept as written'],
  ['/a%2fb/%3a', '/a%2fb/%3a', 'RFC 3986 §2.2: escape case kept as written'],
  ['/%20x', '/%20x', 'RFC 3986 §2.1: non-unreserved escape kept'],
  ['/caf%C3%A9', '/caf%C3%A9', 'RFC 3986 §2.1: UTF-8 escapes kept'],
  ['/a/b;p=1/../c', '/a/c', 'RFC 3986 §3.3: a segment with params is one segment'],
  ['/a:b@c', '/a:b@c', 'RFC 3986 §3.3 pchar'],
];

// [input, source]
const rejected: [string, string][] = [
  ['/..', 'DESIGN: climbs above "/" (RFC 3986 §5.2.4 would clamp)'],
  ['/a/../..', 'DESIGN: climbs above "/"'],
  ['/%2e%2e/x', 'DESIGN: encoded climb above "/"'],
  ['/a/%00', 'DESIGN: encoded NUL'],
  ['/a%zz', 'RFC 3986 §2.1: malformed escape'],
  ['/a%4', 'RFC 3986 §2.1: truncated escape'],
  ['a/b', 'RFC 3986 §4.2: not an absolute path'],
  ['', 'RFC 3986 §4.2: empty'],
];

describe('normalizePath', () => {
  it.each(good)('%s → %s (%s)', (input, expected) => {
    expect(normalizePath(input)).toBe(expected);
  });

  it.each(rejected)('rejects %s (%s)', (input) => {
    let err: unknown;
    try {
      normalizePath(input);
    } catch (e) {
      err = e;
    }
    expect(isSwitchboardError(err)).toBe(true);
    expect((err as { code: string }).code).toBe('SWB_ERR_BAD_REQUEST');
  });

  it('is idempotent on its own output', () => {
    for (const [input] of good) {
      const once = normalizePath(input);
      expect(normalizePath(once)).toBe(once);
    }
  });
});
