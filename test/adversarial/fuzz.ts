/**
 * Shared pieces of the adversarial property tests: how many runs (FUZZ_RUNS for `npm run fuzz`),
 * a grammar-aware generator of HTTP/1 request heads with the hazards of
 * reference/peers-reliability.md §3 mixed in, and a verdict wrapper for our parser.
 */
import fc from 'fast-check';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { type Http1Head, peekHttp1 } from '../../src/peek/http1.ts';

/** `ci` runs by default; `FUZZ_RUNS=n` (npm run fuzz) multiplies every suite's runs to n. */
export function runs(ci: number): number {
  const n = Number(process.env.FUZZ_RUNS);
  return Number.isFinite(n) && n > 0 ? Math.max(ci, Math.floor(n)) : ci;
}

/** Per-test timeout that grows with the runs (sockets take ~1–5 ms a run). */
export function timeoutFor(ci: number, msPerRun = 20, base = 30_000): number {
  return base + runs(ci) * msPerRun;
}

/** Our verdict on a complete head: the head, or the typed error's code. */
export type OurVerdict = { readonly head: Http1Head } | { readonly code: string } | { readonly more: true };

/** Runs our one-shot peek; anything but a SwitchboardError is rethrown (a defect). */
export function ours(bytes: Buffer, max = 16_384): OurVerdict {
  try {
    const head = peekHttp1(bytes, max);
    return head === undefined ? { more: true } : { head };
  } catch (e) {
    if (isSwitchboardError(e)) return { code: e.code };
    throw e;
  }
}

/** Mostly `valid`, sometimes one of `hazards` (so accepted heads are common, yet varied). */
function mostly<T>(valid: readonly T[], hazards: readonly T[]): fc.Arbitrary<T> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 12 },
    { arbitrary: fc.constantFrom(...hazards), weight: 1 },
  );
}

// Hazard rows refer to reference/peers-reliability.md §3.
const method = mostly(['GET', 'POST', 'PUT', 'HEAD', 'OPTIONS', 'DELETE', 'PATCH'], ['get', 'G=T', 'CONNECT']);
const target = mostly(
  [
    '/',
    '/a/b?c=d',
    '/x/../y',
    '//double',
    '/a%20b',
    '/~u/x.html',
    '/a?b=c&d=%2F',
    'http://h.test/abs',
    // Path spellings (issue 17 item 4): read as /admin/secret for matching.
    '/admin%2Fsecret',
    '/%61dmin/secret',
    '/./admin//secret',
    '/x%2F..%2Fadmin/secret',
  ],
  [
    '/%2e%2e/x',
    '/a%00b',
    '/a#frag',
    '/\xe9',
    '/\x7f',
    'http://other.test/abs',
    '*',
    'h.test:443',
    'admin',
    '/a b',
    '/a%5Cb',
    '/a\\b',
    '/..//x',
  ], // rows 8, 11
);
const version = mostly(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'], ['HTTP/1.2', 'http/1.1', 'HTTP/2.0', 'HTTP/1.10']); // row 11
const sp = mostly([' '], ['  ', '\t']); // row 11: exactly one SP
const hostValue = mostly(
  ['h.test', 'H.Test:8080', 'h.test.', '[::1]:80', '127.0.0.1', 'a-b.h.test'],
  ['a b', 'user@h.test', 'h.test:80:80', '', '\xe9.test', 'h.test:x'], // row 9
);
const field = mostly<readonly [string, string]>(
  [
    ['X-A', 'v'],
    ['Accept', '*/*'],
    ['User-Agent', 'fuzz/1.0 (x; y)'],
    ['Content-Length', '5'],
    ['Content-Length', '0'],
    ['Transfer-Encoding', 'chunked'],
    ['Connection', 'close'],
    ['Connection', 'keep-alive'],
    ['Expect', '100-continue'],
    ['X-Empty', ''],
    ['X-Quoted', '"a, b"'],
  ],
  [
    ['Content-Length', '+5'], // row 4
    ['Content-Length', '5, 5'],
    ['Content-Length', '0x5'],
    ['Content-Length', '99999999999999999999999'],
    ['Transfer-Encoding', 'chunked, identity'], // row 3
    ['Transfer-Encoding', 'gzip'],
    ['Transfer-Encoding', 'xchunked'],
    ['Transfer-Encoding', 'chunked, chunked'],
    ['Host ', 'h.test'], // row 7
    ['Ho st', 'h.test'],
    ['X\x00', 'a'],
    ['X\xe9', 'a'],
    ['', 'a'],
    ['X-Ctl', 'a\x01b'],
    ['X-Hi', '\xe9'],
    ['Host', 'h.test'], // row 9: a second Host
  ],
);
const colon = mostly([': ', ':', ':  '], [':\t', ' : ']);
const eol = mostly(['\r\n'], ['\n', '\r\n ']); // rows 5, 6

/** A complete request head (ends with an empty line), valid or carrying one or more hazards. */
export const requestHead: fc.Arbitrary<Buffer> = fc
  .record({
    lead: mostly([''], ['\r\n']), // row 13
    method,
    s1: sp,
    target,
    s2: sp,
    version,
    host: mostly([true], [false]),
    hostValue,
    fields: fc.array(fc.tuple(field, colon, eol), { maxLength: 5 }),
    eol,
  })
  .map((r) => {
    let text = `${r.lead}${r.method}${r.s1}${r.target}${r.s2}${r.version}${r.eol}`;
    if (r.host) text += `Host: ${r.hostValue}\r\n`;
    for (const [[n, v], c, e] of r.fields) text += `${n}${c}${v}${e}`;
    return Buffer.from(`${text}\r\n`, 'latin1');
  });

/** The body framing of an accepted head, as a comparable string. */
export function framingOf(head: Http1Head): string {
  const f = head.bodyFraming;
  return f.kind === 'length' ? `length:${f.length}` : f.kind;
}

/** Host as we normalise it (lower case, no port, one trailing dot removed), from a raw header. */
export function normaliseHost(raw: string): string {
  let h = raw.trim().toLowerCase();
  if (h.startsWith('[')) h = h.slice(0, h.indexOf(']') + 1);
  else if (h.includes(':')) h = h.slice(0, h.indexOf(':'));
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/** A generated chunk-ext (RFC 9112 §7.1.1) for a chunk-size line, and what a strict reader makes of it. */
export interface ChunkExt {
  /** The bytes after the chunk size, up to (not including) the CRLF. */
  readonly text: string;
  /** True when the text follows the chunk-ext grammar (and our rule: no BWS before the first ';'). */
  readonly valid: boolean;
  /** True when the text has BWS, which the RFC allows and Node's llhttp refuses. */
  readonly bws: boolean;
}

/** A piece of a chunk-ext: its text and whether it keeps the grammar. */
type Piece = readonly [text: string, ok: boolean];

const tchars = "!#$%&'*+-.^_`|~09azAZ";
const extToken = fc.array(fc.constantFrom(...tchars.split('')), { minLength: 1, maxLength: 5 }).map((a) => a.join(''));
const extQuoted = fc
  .array(fc.constantFrom('a', ' ', '\t', ';', '=', ',', '\\"', '\\\\', '\\a', '\x80', '\xff'), { maxLength: 5 })
  .map((a) => `"${a.join('')}"`);
const extName = fc.oneof(
  { arbitrary: extToken.map((t): Piece => [t, true]), weight: 12 },
  { arbitrary: fc.constantFrom<Piece>(['', false], ['\xe9', false], ['a/b', false], ['a\x00', false]), weight: 1 },
);
const extValue = fc.oneof(
  { arbitrary: fc.constant<Piece | null>(null), weight: 4 },
  { arbitrary: extToken.map((t): Piece => [t, true]), weight: 4 },
  { arbitrary: extQuoted.map((q): Piece => [q, true]), weight: 4 },
  {
    arbitrary: fc.constantFrom<Piece>(
      ['', false], // empty value
      ['"ab', false], // unclosed quote
      ['b c', false], // unquoted space
      ['\xff', false], // obs-text outside quotes
      ['"a"b', false], // text after the closing quote
      ['"\x01"', false], // CTL in quotes
      ['"\x7f"', false], // DEL in quotes
      ['a"b"', false], // quote inside a token
    ),
    weight: 1,
  },
);
const extWs = fc.constantFrom('', '', '', ' ', '\t', ' \t');
const extItem = fc.record({
  before: extWs,
  after: extWs,
  name: extName,
  eqBefore: extWs,
  eqAfter: extWs,
  value: extValue,
});

/** Chunk extensions, mostly valid, with the hazards strict parsers refuse mixed in. */
export const chunkExtension: fc.Arbitrary<ChunkExt> = fc
  .tuple(fc.array(extItem, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '', '', ' '))
  .map(([items, trailing]) => {
    let text = '';
    let valid = trailing === '';
    let bws = false;
    items.forEach((it, i) => {
      const before = i === 0 ? '' : it.before; // no BWS before the first ';' (tested elsewhere)
      text += `${before};${it.after}${it.name[0]}`;
      valid &&= it.name[1];
      bws ||= before !== '' || it.after !== '';
      if (it.value !== null) {
        text += `${it.eqBefore}=${it.eqAfter}${it.value[0]}`;
        valid &&= it.value[1];
        bws ||= it.eqBefore !== '' || it.eqAfter !== '';
      }
    });
    return { text: text + trailing, valid, bws: bws || trailing !== '' };
  });

/**
 * Upgrade field lines of a request (RFC 9110 §7.8, `protocol-name ["/" protocol-version]`),
 * spelled in the ways peers differ on: case, versions, list position, OWS, several lines.
 * `h2` is true when any element names `h2c` or `h2` (the router refuses those, RFC 9113 §3.1);
 * `names` are the lower-cased protocol names in order.
 */
export interface UpgradeOffer {
  readonly lines: readonly string[];
  readonly names: readonly string[];
  readonly h2: boolean;
}

const upgradeName = fc.constantFrom(
  'websocket',
  'WebSocket',
  'h2c',
  'H2C',
  'h2',
  'H2',
  'h2c-14',
  'xh2c',
  'HTTP',
  'TLS',
);
const upgradeElement = fc
  .tuple(upgradeName, fc.option(fc.constantFrom('1', '2.0', '13'), { nil: undefined }))
  .map(([name, v]) => ({ name, text: v === undefined ? name : `${name}/${v}` }));
const listSep = fc.constantFrom(',', ', ', ' ,', '\t,\t');

/** Upgrade offers: one to three lines of one to three elements each. */
export const upgradeOffer: fc.Arbitrary<UpgradeOffer> = fc
  .array(fc.tuple(fc.array(upgradeElement, { minLength: 1, maxLength: 3 }), listSep), { minLength: 1, maxLength: 3 })
  .map((lines) => {
    const names = lines.flatMap(([els]) => els.map((e) => e.name.toLowerCase()));
    return {
      lines: lines.map(([els, sep]) => els.map((e) => e.text).join(sep)),
      names,
      h2: names.some((n) => n === 'h2c' || n === 'h2'),
    };
  });

/**
 * Path spellings (issue 17 item 4): segments that are plain, empty, dot-segments written plain or
 * encoded, encoded slashes and backslashes, double encoding, encoded unreserved characters and
 * broken escapes, joined by one or two slashes. Each is what a hostile client would try to make
 * routing and the backend read different paths.
 */
export const pathSpelling: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.constantFrom('/', '/', '/', '//', '%2F', '%2f'),
      fc.constantFrom(
        'admin',
        'secret',
        'a',
        '',
        '.',
        '..',
        '%2e',
        '%2E%2e',
        '.%2e',
        '%61dmin',
        '%41',
        '%20x',
        '%252F',
        'x;y',
        '~u',
        '%5C',
        '%5c',
        '%00',
        '%zz',
        '%4',
      ),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => {
    const path = parts.map(([sep, seg]) => sep + seg).join('');
    return path.startsWith('/') ? path : `/${path}`;
  });

/**
 * Read boundaries for trickled heads (issue 17 item 9): how a peer may cut `length` bytes into
 * reads — mostly one byte at a time, sometimes a few, sometimes everything at once. The cut
 * points are sorted offsets strictly inside (0, length).
 */
export function readCuts(length: number): fc.Arbitrary<number[]> {
  if (length < 2) return fc.constant([]);
  const everyByte = Array.from({ length: length - 1 }, (_, i) => i + 1);
  return fc.oneof(
    { arbitrary: fc.constant(everyByte), weight: 2 },
    {
      arbitrary: fc
        .uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: Math.min(64, length - 1) })
        .map((cuts) => cuts.sort((a, b) => a - b)),
      weight: 3,
    },
    { arbitrary: fc.constant([] as number[]), weight: 1 },
  );
}
