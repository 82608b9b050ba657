/**
 * Outbound PROXY header limits (issue 17 item 2): the `try…` encoders never throw, whatever the
 * client put in the values they carry; a value that cannot be sent is a refusal, and
 * `proxyHeaderFor` turns it into the router's answer (431 `header_too_large`).
 * Spec: haproxy `doc/proxy-protocol.txt` §2.1 (v1 line ≤ 107 bytes), §2.2 (16-bit lengths),
 * §2.2.1 (ALPN), §2.2.2 (AUTHORITY, a host name); RFC 7301 §3.1 (an ALPN id is 1–255 bytes).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type EncodeRefusal,
  encodeProxyV2,
  isEncodeRefusal,
  type ProxyV2Options,
  parseProxyHeader,
  tryEncodeProxyV1,
  tryEncodeProxyV2,
  V1_MAX_LENGTH,
  V2_AUTHORITY_MAX_BYTES,
} from '../../src/proxy-protocol/index.ts';
import { isProxyOutRefused, proxyHeaderFor } from '../../src/upstream/proxy-out.ts';
import { fakeRequest } from './condition-fixtures.ts';

const src = { ip: '203.0.113.7', port: 51234 };
const dst = { ip: '198.51.100.2', port: 443 };
const v6a = { ip: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe', port: 65535 };
const v6b = { ip: 'fffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff', port: 65534 };

type Want = 'ok' | EncodeRefusal['refused'];
/** Options a row overrides; `undefined` removes a default (a source without a destination). */
type Opts = { [K in keyof ProxyV2Options]?: ProxyV2Options[K] | undefined };

function v2(o: Opts): Buffer | EncodeRefusal {
  return tryEncodeProxyV2({ command: 'proxy', source: src, destination: dst, crc32c: true, ...o } as ProxyV2Options);
}

describe('v2 encoder limits: a refusal, never a throw', () => {
  const rows: [string, Opts, Want][] = [
    ['§2.2.2 AUTHORITY of 255 bytes (longest host name)', { authority: 'a'.repeat(255) }, 'ok'],
    ['§2.2.2 AUTHORITY of 256 bytes', { authority: 'a'.repeat(256) }, 'too_long'],
    ['§2.2.2 AUTHORITY counted in UTF-8 bytes (128 × é = 256)', { authority: 'é'.repeat(128) }, 'too_long'],
    [
      '§2.2 AUTHORITY over the 16-bit TLV length (70 005 bytes)',
      { authority: `${'a'.repeat(70_000)}.test` },
      'too_long',
    ],
    ['§2.2 AUTHORITY of 1 MiB (maxHeaderBytes at the schema maximum)', { authority: 'a'.repeat(1 << 20) }, 'too_long'],
    ['RFC 7301 §3.1 ALPN id of 255 bytes', { alpn: 'h'.repeat(255) }, 'ok'],
    ['RFC 7301 §3.1 ALPN id of 256 bytes', { alpn: 'h'.repeat(256) }, 'too_long'],
    [
      '§2.2 longest header: IPv6, ALPN 255, AUTHORITY 255, CRC32C',
      { source: v6a, destination: v6b, alpn: 'h'.repeat(255), authority: 'a'.repeat(255) },
      'ok',
    ],
    ['§2.2 an address that is not one', { source: { ip: 'not-an-ip', port: 1 } }, 'bad_address'],
    ['§2.2 a port out of range', { destination: { ip: '198.51.100.2', port: 70_000 } }, 'bad_address'],
    ['§2.2 a source without a destination', { destination: undefined }, 'bad_address'],
  ];

  it.each(rows)('%s → %s', (_name, options, want) => {
    const out = v2(options);
    if (want !== 'ok') {
      expect(isEncodeRefusal(out)).toBe(true);
      expect((out as EncodeRefusal).refused).toBe(want);
      // The throwing form, for caller-controlled values, says the same with a typed error.
      expect(() =>
        encodeProxyV2({ command: 'proxy', source: src, destination: dst, ...options } as ProxyV2Options),
      ).toThrow(expect.objectContaining({ code: 'SWB_ERR_PROXY_HEADER' }));
      return;
    }
    const buf = out as Buffer;
    const h = parseProxyHeader(buf, 'v2', 65_551);
    expect(h).toMatchObject({ length: buf.length });
    if (options.authority !== undefined) expect(h?.authority).toBe(options.authority);
    if (options.alpn !== undefined) expect(h?.alpn).toBe(options.alpn);
    // Receivers with nginx's 4096-byte cap take the longest header we send.
    expect(buf.length).toBeLessThanOrEqual(4096);
  });

  it('never throws for any authority, alpn or endpoint text (fast-check)', () => {
    const ep = fc.record({ ip: fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), port: fc.integer() });
    fc.assert(
      fc.property(
        ep,
        ep,
        fc.option(fc.string({ maxLength: 400 }), { nil: undefined }),
        fc.option(fc.string({ maxLength: 400 }), { nil: undefined }),
        (s, d, authority, alpn) => {
          const out = tryEncodeProxyV2({
            command: 'proxy',
            source: s,
            destination: d,
            ...(authority !== undefined ? { authority } : {}),
            ...(alpn !== undefined ? { alpn } : {}),
          });
          if (!isEncodeRefusal(out)) expect(parseProxyHeader(out, 'v2')?.length).toBe(out.length);
          const line = tryEncodeProxyV1({ source: s, destination: d });
          if (!isEncodeRefusal(line)) expect(line.length).toBeLessThanOrEqual(V1_MAX_LENGTH);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('v1 encoder limits (§2.1: at most 107 bytes, addresses only)', () => {
  it.each([
    ['longest TCP6 line: two 39-character addresses, 5-digit ports', v6a, v6b, 'ok'],
    ['TCP4', src, dst, 'ok'],
    ['an address that is not one', { ip: '1.2.3.4.5', port: 1 }, dst, 'bad_address'],
    ['a negative port', { ip: '1.2.3.4', port: -1 }, dst, 'bad_address'],
  ] as const)('%s → %s', (_name, s, d, want) => {
    const out = tryEncodeProxyV1({ source: s, destination: d });
    if (want !== 'ok') {
      expect((out as EncodeRefusal).refused).toBe(want);
      return;
    }
    const buf = out as Buffer;
    expect(buf.length).toBeLessThanOrEqual(V1_MAX_LENGTH);
    expect(parseProxyHeader(buf, 'v1')).toMatchObject({ source: { port: s.port }, length: buf.length });
  });
});

describe('proxyHeaderFor: the request values the header carries', () => {
  const long = 'a'.repeat(V2_AUTHORITY_MAX_BYTES + 1);
  it.each([
    ['v2, Host of 70 KB (maxHeaderBytes 1 MiB)', 'v2', { host: `${'a'.repeat(70_000)}.test` }, 'header_too_large'],
    ['v2, Host of 256 bytes', 'v2', { host: long }, 'header_too_large'],
    ['v2, TLS passthrough SNI of 256 bytes', 'v2', { sni: long, host: long, protocol: 'tls' }, 'header_too_large'],
    ['v2, Host of 255 bytes', 'v2', { host: 'a'.repeat(255) }, 'ok'],
    ['v1 carries no host: Host of 70 KB is fine', 'v1', { host: 'a'.repeat(70_000) }, 'ok'],
    ['v2, a client address that is not one', 'v2', { clientIp: 'garbage' }, 'bad_request'],
    ['off: nothing to send', 'off', { host: 'a'.repeat(70_000) }, 'none'],
  ] as const)('%s → %s', (_name, mode, init, want) => {
    const out = proxyHeaderFor(mode, fakeRequest(init));
    if (want === 'none') expect(out).toBeUndefined();
    else if (want === 'ok') expect(Buffer.isBuffer(out)).toBe(true);
    else {
      expect(isProxyOutRefused(out)).toBe(true);
      expect(out).toMatchObject({ result: want, reason: expect.stringMatching(/^proxy protocol: encode v[12]: /) });
    }
  });
});
