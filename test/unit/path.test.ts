import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { normalizePath, type PathNormalization } from '../../src/peek/path.ts';

const KEEP: PathNormalization = { mergeSlashes: false, escapedSlashes: 'keep' };
const REJECT: PathNormalization = { mergeSlashes: true, escapedSlashes: 'reject' };
const DECODE_NO_MERGE: PathNormalization = { mergeSlashes: false, escapedSlashes: 'decode' };

// Default options (merge slashes, decode %2F): [input, expected normalised path, source]
const good: [string, string, string][] = [
  ['/', '/', 'RFC 3986 §3.3 path-absolute'],
  ['/a/b/c', '/a/b/c', 'RFC 3986 §3.3'],
  ['/a//b', '/a/b', 'pathNormalization.mergeSlashes (nginx merge_slashes on)'],
  ['//admin/secret', '/admin/secret', 'pathNormalization.mergeSlashes: leading "//"'],
  ['/a///b//', '/a/b/', 'pathNormalization.mergeSlashes: runs of any length'],
  ['/a//../b', '/b', 'mergeSlashes before RFC 3986 §5.2.4, as nginx resolves it'],
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
  ['/admin%2Fsecret', '/admin/secret', 'escapedSlashes: decode (nginx decodes %2F, RFC 3986 §2.2)'],
  ['/admin%2fsecret', '/admin/secret', 'escapedSlashes: decode, lower-case hex (RFC 3986 §2.1)'],
  ['/x%2F..%2Fadmin/secret', '/admin/secret', 'escapedSlashes: decode, then RFC 3986 §5.2.4'],
  ['/admin%2F%2Fsecret', '/admin/secret', 'escapedSlashes: decode, then mergeSlashes'],
  ['/%61dmin/secret', '/admin/secret', 'RFC 3986 §2.3: encoded unreserved "a"'],
  ['/./admin/secret', '/admin/secret', 'RFC 3986 §5.2.4 step 2B'],
  ['/x/../admin/secret', '/admin/secret', 'RFC 3986 §5.2.4 step 2C'],
  ['/a%252Fb', '/a%252Fb', 'RFC 3986 §2.4: decoded once, "%25" stays an escape'],
  ['/a%3Ab/%3a', '/a%3Ab/%3a', 'RFC 3986 §2.2: other reserved escapes kept as written'],
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
  ['/a%5Cb', 'escapedSlashes: decode refuses %5C (backends disagree on "\\")'],
  ['/a%5cb', 'escapedSlashes: decode refuses %5c'],
  ['/a\\b', 'RFC 3986 §3.3: "\\" is not a pchar (some backends read "/")'],
  ['//..', 'mergeSlashes then RFC 3986 §5.2.4: climbs above "/"'],
  ['/a%2F..%2F..', 'escapedSlashes: decode then §5.2.4: climbs above "/"'],
];

// Other options: [options, input, expected, source]
const optioned: [PathNormalization, string, string, string][] = [
  [KEEP, '/a//b', '/a//b', 'mergeSlashes: false keeps empty segments (RFC 3986 §3.3)'],
  [KEEP, '/a//../b', '/a/b', 'mergeSlashes: false, RFC 3986 §5.2.4 pops the empty segment'],
  [KEEP, '/admin%2Fsecret', '/admin%2Fsecret', 'escapedSlashes: keep (Envoy KEEP_UNCHANGED)'],
  [KEEP, '/a%2fb/%3a', '/a%2fb/%3a', 'escapedSlashes: keep, escape case kept as written'],
  [KEEP, '/a%5Cb', '/a%5Cb', 'escapedSlashes: keep also keeps %5C'],
  [KEEP, '/x%2F..%2Fy', '/x%2F..%2Fy', 'escapedSlashes: keep, ".." inside a segment is not a dot-segment'],
  [KEEP, '/%61/%2E%2E/b', '/b', 'RFC 3986 §2.3 and §5.2.4 apply in every mode'],
  [REJECT, '/a//b', '/a/b', 'escapedSlashes: reject, mergeSlashes on'],
  [REJECT, '/a/b', '/a/b', 'escapedSlashes: reject, nothing to refuse'],
  [DECODE_NO_MERGE, '/a%2F%2Fb', '/a//b', 'escapedSlashes: decode without mergeSlashes'],
];

// Refused only under some options: [options, input, source]
const optionedRejected: [PathNormalization, string, string][] = [
  [REJECT, '/admin%2Fsecret', 'escapedSlashes: reject (Envoy REJECT_REQUEST)'],
  [REJECT, '/admin%2fsecret', 'escapedSlashes: reject, lower-case hex'],
  [REJECT, '/a%5Cb', 'escapedSlashes: reject covers %5C'],
  [KEEP, '/a\\b', 'RFC 3986 §3.3: raw "\\" refused in every mode'],
  [KEEP, '/a/%00', 'DESIGN: encoded NUL refused in every mode'],
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

  it.each(optioned)('%o: %s → %s (%s)', (options, input, expected) => {
    expect(normalizePath(input, options)).toBe(expected);
  });

  it.each(optionedRejected)('%o: rejects %s (%s)', (options, input) => {
    expect(() => normalizePath(input, options)).toThrow(expect.objectContaining({ code: 'SWB_ERR_BAD_REQUEST' }));
  });

  it('is idempotent on its own output', () => {
    for (const [input] of good) {
      const once = normalizePath(input);
      expect(normalizePath(once)).toBe(once);
    }
    for (const [options, input] of optioned) {
      const once = normalizePath(input, options);
      expect(normalizePath(once, options)).toBe(once);
    }
  });
});
