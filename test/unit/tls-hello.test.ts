import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { type ClientHello, ClientHelloScanner, looksLikeTls, peekClientHello } from '../../src/peek/tls-hello.ts';
import {
  alpnExt,
  captureNodeHello,
  captureOpensslHello,
  ext,
  handshake,
  helloBody,
  insertExtension,
  records,
  sniExt,
  unframe,
  versionsExt,
} from '../fixtures/tls/hello-builder.ts';

type Outcome = { ok: ClientHello | undefined } | { code: string; message: string };

/** Calls the parser and turns a SwitchboardError into data; anything else is rethrown. */
function outcome(buf: Buffer, max?: number, scanner?: ClientHelloScanner): Outcome {
  try {
    return { ok: scanner === undefined ? peekClientHello(buf, max) : scanner.feed(buf) };
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    return { code: e.code, message: e.message };
  }
}

/**
 * Feeds `buf` in the given chunk sizes to one incremental scanner, as the peek does (which must
 * then agree with the one-shot parse of the whole); stops at the first answer.
 */
function fed(buf: Buffer, sizes: number[], max?: number): Outcome {
  const scanner = new ClientHelloScanner(max);
  let end = 0;
  for (const size of [...sizes, buf.length]) {
    end = Math.min(buf.length, end + Math.max(1, size));
    const o = outcome(buf.subarray(0, end), max, scanner);
    if (!('ok' in o) || o.ok !== undefined || end === buf.length) return o;
  }
  return outcome(buf, max);
}

const oneByteAtATime = (buf: Buffer) => fed(buf, new Array(buf.length).fill(1));
const helloOf = (exts: Buffer[] | undefined) => records(handshake(helloBody(exts)));
const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let node: Buffer;
let nodeNoSni: Buffer;

beforeAll(async () => {
  node = await captureNodeHello({ servername: 'Example.COM', alpn: ['h2', 'http/1.1'] });
  nodeNoSni = await captureNodeHello({ alpn: ['http/1.1'] });
});

describe('looksLikeTls', () => {
  it('accepts only the handshake record type (RFC 8446 §5.1)', () => {
    expect(looksLikeTls(0x16)).toBe(true);
    for (const b of [0x15, 0x17, 0x80, 0x47, 0x50, 0x0d]) expect(looksLikeTls(b)).toBe(false);
  });
});

describe('real ClientHello from node tls.connect', () => {
  it('extracts lower-cased SNI, ALPN and versions when fed whole', () => {
    const hello = peekClientHello(node);
    expect(hello).toEqual({
      sni: 'example.com',
      alpn: ['h2', 'http/1.1'],
      length: node.length,
      legacyVersion: 0x0303,
      supportedVersions: expect.arrayContaining([0x0304]),
    });
  });

  it('is a post-quantum sized hello that fits the default 16 KiB cap (peers §5.1)', () => {
    expect(node.length).toBeGreaterThan(1000);
    expect(peekClientHello(node, 16_384)?.sni).toBe('example.com');
  });

  it('gives the same answer fed one byte at a time, and undefined for every strict prefix', () => {
    for (let k = 0; k < node.length; k++) expect(peekClientHello(node.subarray(0, k))).toBeUndefined();
    expect(oneByteAtATime(node)).toEqual(outcome(node));
  });

  it('ignores bytes after the hello (CCS, early data) and reports only the records consumed (peers §5.10)', () => {
    const ccs = Buffer.from([0x14, 3, 3, 0, 1, 1, 0x17, 3, 3, 0, 2, 9, 9]);
    expect(peekClientHello(Buffer.concat([node, ccs]))?.length).toBe(node.length);
  });

  it('reassembles the hello split across two records at every offset (RFC 8446 §5.1)', () => {
    const msg = unframe(node);
    const whole = peekClientHello(node)!;
    for (let cut = 1; cut < msg.length; cut++) {
      const two = records(msg, [cut]);
      expect(peekClientHello(two)).toEqual({ ...whole, length: two.length });
    }
  });

  it('reassembles many small records, the 4-byte header itself split, fed one byte at a time', () => {
    const msg = unframe(node);
    const cuts = [1, 2, 3, 5, 50, 51, 300, msg.length - 1];
    const many = records(msg, cuts);
    const o = oneByteAtATime(many);
    expect('ok' in o && o.ok?.sni).toBe('example.com');
    expect('ok' in o && o.ok?.length).toBe(many.length);
  });

  it('reports no SNI when the client connects by IP', () => {
    expect(peekClientHello(nodeNoSni)).toMatchObject({ sni: undefined, alpn: ['http/1.1'] });
  });

  it('skips GREASE extensions, ALPN ids and versions inserted into a real hello (RFC 8701)', () => {
    const greased = insertExtension(
      insertExtension(node, Buffer.concat([ext(0x0a0a, Buffer.alloc(0)), ext(0xfafa, Buffer.from([0]))])),
      ext(0x3a3a, Buffer.from('x')),
    );
    expect(peekClientHello(greased)).toEqual({ ...peekClientHello(node), length: greased.length });
    const synthetic = helloOf([
      sniExt('a.example'),
      alpnExt(Buffer.from([0x2a, 0x2a]), 'h2'),
      versionsExt(0x5a5a, 0x0304),
    ]);
    expect(peekClientHello(synthetic)).toMatchObject({ sni: 'a.example', alpn: ['h2'], supportedVersions: [0x0304] });
  });

  it('rejects a duplicate extension in a real hello (RFC 8446 §4.2)', () => {
    expect(outcome(insertExtension(node, alpnExt('h2')))).toMatchObject({ message: /duplicate extension 0x0010/ });
  });

  it('refuses a hello larger than maxBytes as soon as the handshake length is known (peers §5.11)', () => {
    const max = node.length - 1;
    expect(outcome(node, max)).toMatchObject({ code: 'SWB_ERR_TLS_HELLO', message: /exceeds/ });
    expect(outcome(node.subarray(0, 9), max)).toMatchObject({ code: 'SWB_ERR_TLS_HELLO' });
  });

  it('counts only the hello against maxBytes, not early data buffered behind it', () => {
    const behind = Buffer.concat([node, Buffer.alloc(20_000, 0x17)]);
    expect(peekClientHello(behind, node.length)?.length).toBe(node.length);
  });
});

describe.skipIf(!hasOpenssl)('real ClientHello from openssl s_client', () => {
  it('extracts SNI and ALPN, whole and one byte at a time', async () => {
    const hello = await captureOpensslHello('Backend.Example.org', 'h2,http/1.1');
    expect(peekClientHello(hello)).toMatchObject({ sni: 'backend.example.org', alpn: ['h2', 'http/1.1'] });
    expect(oneByteAtATime(hello)).toEqual(outcome(hello));
  });
});

describe('synthetic hellos', () => {
  it('accepts a hello without any extensions block (RFC 5246 §7.4.1.2)', () => {
    expect(peekClientHello(helloOf(undefined))).toMatchObject({ sni: undefined, alpn: [], supportedVersions: [] });
  });

  // [name, server names, expected sni or error pattern, source]
  const sniRows: Array<[string, Array<string | [number, Buffer]>, string | RegExp, string]> = [
    ['upper case folded', ['WWW.Example.COM'], 'www.example.com', 'RFC 6066 §3 (case-insensitive)'],
    ['one trailing dot removed', ['example.com.'], 'example.com', 'bfe.md §9 (trailing dot stripped)'],
    ['underscore label allowed', ['_acme.example'], '_acme.example', 'nginx ngx_stream_validate_host'],
    ['two trailing dots', ['example.com..'], /empty label/, 'RFC 1035 §2.3.1'],
    ['empty name', [''], /empty host_name/, 'peers §5.6'],
    ['ipv4 literal', ['192.0.2.1'], /ip literal/, 'RFC 6066 §3'],
    ['ipv6 literal', ['::1'], /invalid character/, 'RFC 6066 §3'],
    ['bracketed ipv6', ['[::1]'], /invalid character/, 'RFC 6066 §3'],
    ['non-ascii byte', ['caf\u00e9.example'], /invalid character/, 'RFC 6066 §3 (A-labels only)'],
    ['space', ['a b.example'], /invalid character/, 'RFC 1035 §2.3.1'],
    ['label over 63', [`${'a'.repeat(64)}.example`], /63/, 'RFC 1035 §2.3.4'],
    ['name over 253', [`${'abcdefg.'.repeat(32)}example`], /253/, 'RFC 1035 §2.3.4'],
    ['two host_names', ['a.example', 'b.example'], /second host_name/, 'RFC 6066 §3'],
    ['unknown name type skipped', [[7, Buffer.from('zz')], 'ok.example'], 'ok.example', 'RFC 6066 §3'],
  ];
  it.each(sniRows)('sni: %s', (_name, names, want) => {
    const hello = helloOf([sniExt(...names)]);
    const o = outcome(hello);
    if (typeof want === 'string') expect(o).toMatchObject({ ok: { sni: want } });
    else expect(o).toMatchObject({ code: 'SWB_ERR_TLS_HELLO', message: want });
    expect(oneByteAtATime(hello)).toEqual(o);
  });

  // [name, hello bytes, error pattern, source]
  const badRows: Array<[string, Buffer, RegExp, string]> = [
    ['sslv2 hello', Buffer.from([0x80, 0x2e, 0x01, 0x03, 0x01]), /sslv2/, 'peers §5.3'],
    ['http request', Buffer.from('GET / HTTP/1.1\r\n'), /not a handshake record/, 'peers §5.12'],
    ['record major 0', Buffer.from([0x16, 0x00]), /version major 0/, 'RFC 8446 §5.1'],
    ['zero-length record', Buffer.from([0x16, 3, 1, 0, 0]), /zero-length/, 'RFC 8446 §5.1'],
    ['record over 2^14', Buffer.from([0x16, 3, 1, 0x40, 0x01]), /exceeds 2\^14/, 'RFC 8446 §5.1'],
    ['not a clienthello', Buffer.from([0x16, 3, 1, 0, 4, 2]), /handshake type 2/, 'RFC 8446 §4'],
    ['alert interleaved', Buffer.from([0x16, 3, 1, 0, 1, 1, 0x15, 3, 3]), /record type 21/, 'RFC 8446 §5.1'],
    ['empty alpn list', helloOf([ext(16, Buffer.from([0, 0]))]), /alpn protocol_name_list is empty/, 'RFC 7301 §3.1'],
    ['empty alpn name', helloOf([ext(16, Buffer.from([0, 1, 0]))]), /empty alpn protocol name/, 'RFC 7301 §3.1'],
    ['psk not last', helloOf([ext(41, Buffer.alloc(0)), sniExt('a.b')]), /pre_shared_key/, 'RFC 8446 §4.2.11'],
    ['odd versions', helloOf([ext(43, Buffer.from([3, 3, 4, 3]))]), /supported_versions/, 'RFC 8446 §4.2.1'],
    [
      'trailing handshake bytes',
      records(Buffer.concat([handshake(helloBody([])), Buffer.from([1])])),
      /after the clienthello/,
      'RFC 8446 §5.1',
    ],
    [
      'ext overruns',
      helloOf([Buffer.from([0, 0x15, 0x03, 0x84])]),
      /extension 0x0015 length 900 overruns/,
      'peers §5.4',
    ],
  ];
  it.each(badRows)('rejects %s', (_name, bytes, want) => {
    const o = outcome(bytes);
    expect(o).toMatchObject({ code: 'SWB_ERR_TLS_HELLO', message: want });
    expect(oneByteAtATime(bytes)).toEqual(o);
  });

  it('rejects every truncation of the body whose outer lengths were fixed up (peers §5.4)', () => {
    const body = helloBody([sniExt('a.example'), alpnExt('h2', 'http/1.1'), versionsExt(0x0304, 0x0303)]);
    const noExtEnd = helloBody(undefined).length; // the one cut that is still a valid (extension-less) hello
    for (let cut = 0; cut < body.length; cut++) {
      const o = outcome(records(handshake(body.subarray(0, cut))));
      if (cut === noExtEnd) expect(o).toMatchObject({ ok: { sni: undefined } });
      else expect(o, `cut at ${cut}`).toMatchObject({ code: 'SWB_ERR_TLS_HELLO' });
    }
  });
});

describe('properties (fast-check)', () => {
  const splits = fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 20 });

  it('same result for any split of the real hello, mutated or not; only SwitchboardError', () => {
    const mutation = fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }), keep: fc.nat() });
    fc.assert(
      fc.property(fc.option(mutation), splits, (m, sizes) => {
        let buf = Buffer.from(node);
        if (m) {
          buf[m.at % buf.length] = m.value;
          buf = buf.subarray(0, buf.length - (m.keep % 8));
        }
        expect(fed(buf, sizes)).toEqual(outcome(buf));
      }),
      { numRuns: 300 },
    );
  });

  it('random bytes after 0x16 never throw anything but SwitchboardError and are split-independent', () => {
    const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.concat([Buffer.from([0x16, 3, 1]), a]));
    fc.assert(
      fc.property(bytes, splits, (buf, sizes) => {
        expect(fed(buf, sizes)).toEqual(outcome(buf));
      }),
      { numRuns: 500 },
    );
  });
});
