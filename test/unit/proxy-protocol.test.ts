import fc from 'fast-check';
import {
  Command,
  INETProtocol,
  IPv4Address,
  IPv4ProxyAddress,
  IPv6Address,
  IPv6ProxyAddress,
  Peer,
  TransportProtocol,
  V1ProxyProtocol,
  V2ProxyProtocol,
} from 'proxy-protocol-js';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import {
  crc32c,
  encodeProxyV1,
  encodeProxyV2,
  encodeProxyV2Local,
  type ProxyAccept,
  type ProxyHeader,
  parseProxyHeader,
} from '../../src/proxy-protocol/index.ts';

type Outcome = { ok: ProxyHeader | undefined } | { code: string; message: string };

function outcome(buf: Buffer, accept: ProxyAccept = 'any', max?: number): Outcome {
  try {
    return { ok: parseProxyHeader(buf, accept, max) };
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    return { code: e.code, message: e.message };
  }
}

/** Feeds `buf` in chunks, as a socket would, and returns the first answer. */
function fed(buf: Buffer, sizes: number[], accept: ProxyAccept = 'any'): Outcome {
  let end = 0;
  for (const size of [...sizes, buf.length]) {
    end = Math.min(buf.length, end + Math.max(1, size));
    const o = outcome(buf.subarray(0, end), accept);
    if (!('ok' in o) || o.ok !== undefined || end === buf.length) return o;
  }
  return outcome(buf, accept);
}
const oneByteAtATime = (buf: Buffer, accept: ProxyAccept = 'any') => fed(buf, new Array(buf.length).fill(1), accept);

const withoutUndefined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const SIG = '0d0a0d0a000d0a515549540a';
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const v2 = (verCmd: string, fam: string, body: string) => {
  const b = hex(body);
  return Buffer.concat([hex(SIG + verCmd + fam), Buffer.from([b.length >> 8, b.length & 0xff]), b]);
};
const tlvHex = (type: number, value: Buffer) =>
  Buffer.concat([Buffer.from([type, value.length >> 8, value.length & 0xff]), value]).toString('hex');
/** Appends a CRC32C TLV and fills it in, the way a conforming sender does (spec §2.2.5). */
function withCrc(header: Buffer, corrupt = false): Buffer {
  const out = Buffer.concat([header, Buffer.from([0x03, 0, 4, 0, 0, 0, 0])]);
  out.writeUInt16BE(out.readUInt16BE(14) + 7, 14);
  out.writeUInt32BE((crc32c(out) ^ (corrupt ? 1 : 0)) >>> 0, out.length - 4);
  return out;
}
const V4_ADDR = 'c0a80001 c0a8000b dc04 01bb'; // 192.168.0.1:56324 → 192.168.0.11:443
const V6_ADDR = `20010db8000000000000000000000001 20010db8000000000000000000000002 0050 1f90`;

/** Expected fields; `undefined` means the key must be absent. */
type Want = { [K in keyof ProxyHeader]?: ProxyHeader[K] | undefined };

const tcp4: Want = {
  version: 2,
  command: 'proxy',
  family: 'tcp4',
  source: { ip: '192.168.0.1', port: 56324 },
  destination: { ip: '192.168.0.11', port: 443 },
};

// [name, bytes, expected header fields (length = whole input unless given) or error pattern, source]
const rows: Array<[string, Buffer, Want | RegExp, string]> = [
  ['v1 TCP4', Buffer.from('PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n'), { ...tcp4, version: 1 }, 'spec §2.1'],
  [
    'v1 TCP6 longest line (104 bytes)',
    Buffer.from(`PROXY TCP6 ${'ffff:'.repeat(7)}ffff ${'ffff:'.repeat(7)}ffff 65535 65535\r\n`),
    { family: 'tcp6', source: { ip: `${'ffff:'.repeat(7)}ffff`, port: 65535 } },
    'spec §2.1',
  ],
  [
    'v1 TCP6 canonicalised',
    Buffer.from('PROXY TCP6 2001:DB8:0:0:0:0:0:1 ::1 0 80\r\n'),
    { source: { ip: '2001:db8::1', port: 0 } },
    'RFC 5952 §4',
  ],
  [
    'v1 TCP6 first longest zero run, single zero kept',
    Buffer.from('PROXY TCP6 2001:db8:0:0:1:0:0:1 2001:db8:0:1:1:1:1:1 1 2\r\n'),
    { source: { ip: '2001:db8::1:0:0:1', port: 1 }, destination: { ip: '2001:db8:0:1:1:1:1:1', port: 2 } },
    'RFC 5952 §4.2.2-4.2.3',
  ],
  ['v1 UNKNOWN', Buffer.from('PROXY UNKNOWN\r\n'), { version: 1, family: 'unknown' }, 'spec §2.1'],
  [
    'v1 UNKNOWN 107 bytes, rest ignored',
    Buffer.from(`PROXY UNKNOWN ${'x'.repeat(91)}\r\n`),
    { family: 'unknown', length: 107 },
    'spec §2.1',
  ],
  ['v1 double space', Buffer.from('PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n'), /empty field/, 'spec §2.1 (single space)'],
  ['v1 trailing space', Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n'), /empty field/, 'spec §2.1'],
  ['v1 port leading zero', Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 0443 2\r\n'), /port "0443"/, 'peers §2 v1'],
  ['v1 octet leading zero', Buffer.from('PROXY TCP4 1.2.3.04 5.6.7.8 1 2\r\n'), /source address/, 'peers §2 v1'],
  ['v1 port 65536', Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 65536\r\n'), /port "65536"/, 'spec §2.1'],
  ['v1 TCP4 with ipv6', Buffer.from('PROXY TCP4 ::1 5.6.7.8 1 2\r\n'), /not valid for TCP4/, 'spec §2.1'],
  ['v1 TCP6 with ipv4', Buffer.from('PROXY TCP6 1.2.3.4 ::1 1 2\r\n'), /not valid for TCP6/, 'spec §2.1'],
  ['v1 TCP6 zone id', Buffer.from('PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n'), /not valid for TCP6/, 'spec §2.1'],
  ['v1 five fields', Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n'), /5 fields/, 'spec §2.1'],
  ['v1 bare LF', Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n'), /bare lf/, 'peers §2 v1'],
  ['v1 bare CR', Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX'), /bare cr/, 'peers §2 v1'],
  ['v1 lower-case', Buffer.from('proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n'), /cannot start/, 'spec §2.1'],
  ['v1 unknown protocol', Buffer.from('PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n'), /unknown protocol/, 'spec §2.1'],
  ['v1 108 bytes', Buffer.from(`PROXY UNKNOWN ${'x'.repeat(92)}\r\n`), /no crlf within 107/, 'spec §2.1 (107 bytes)'],
  ['v1 no CRLF ever', Buffer.from(`PROXY UNKNOWN ${'x'.repeat(200)}`), /no crlf within 107/, 'spec §2.1'],
  ['v1 NUL byte', Buffer.from('PROXY TCP4 1.2.3.4\x005.6.7.8 1 2\r\n'), /not printable/, 'spec §2.1'],
  ['v2 TCP4', v2('21', '11', V4_ADDR), tcp4, 'spec §2.2'],
  ['v2 UDP4', v2('21', '12', V4_ADDR), { family: 'udp4' }, 'spec §2.2'],
  ['v2 TCP6', v2('21', '21', V6_ADDR), { family: 'tcp6', source: { ip: '2001:db8::1', port: 80 } }, 'spec §2.2'],
  ['v2 UNSPEC', v2('21', '00', ''), { family: 'unknown', source: undefined }, 'spec §2.2'],
  ['v2 UNIX', v2('21', '31', '00'.repeat(216)), { family: 'unix', source: undefined }, 'spec §2.2'],
  ['v2 LOCAL', v2('20', '00', ''), { command: 'local', family: 'unknown' }, 'spec §2.2'],
  [
    'v2 LOCAL skips len, any family',
    v2('20', '7f', V4_ADDR),
    { command: 'local', source: undefined },
    'peers §2 v2 LOCAL',
  ],
  [
    'v2 AUTHORITY + ALPN + unknown TLVs',
    v2(
      '21',
      '11',
      V4_ADDR +
        tlvHex(2, Buffer.from('example.com')) +
        tlvHex(1, Buffer.from('h2')) +
        tlvHex(0xe0, Buffer.from([9])) +
        tlvHex(4, Buffer.alloc(3)) +
        tlvHex(4, Buffer.alloc(0)),
    ),
    { authority: 'example.com', alpn: 'h2' },
    'spec §2.2.1-2.2.2',
  ],
  ['v2 CRC32C valid', withCrc(v2('21', '11', V4_ADDR)), { family: 'tcp4' }, 'spec §2.2.5'],
  ['v2 CRC32C bad', withCrc(v2('21', '11', V4_ADDR), true), /crc32c mismatch/, 'spec §2.2.5'],
  ['v2 CRC32C wrong size', v2('21', '11', V4_ADDR + tlvHex(3, Buffer.alloc(2))), /expected 4/, 'spec §2.2.5'],
  ['v2 wrong signature', hex('0d0a0d0a010d0a515549540a2111000c'), /signature mismatch at byte 4/, 'spec §2.2'],
  ['v2 version 1', v2('11', '11', V4_ADDR), /version 1/, 'spec §2.2 byte 13'],
  ['v2 command 2', v2('22', '11', V4_ADDR), /command 2/, 'spec §2.2 byte 13'],
  ['v2 family 0x13', v2('21', '13', V4_ADDR), /family\/transport 0x13/, 'spec §2.2 byte 14'],
  ['v2 family 0x10', v2('21', '10', V4_ADDR), /family\/transport 0x10/, 'spec §2.2 byte 14'],
  ['v2 len short of INET', v2('21', '11', 'c0a80001c0a8000b'), /shorter than the tcp4/, 'spec §2.2'],
  ['v2 len short of INET6', v2('21', '21', V4_ADDR), /shorter than the tcp6/, 'spec §2.2'],
  [
    'v2 TLV overruns',
    v2('21', '11', `${V4_ADDR}0200ff6162`),
    /overruns header end/,
    'haproxy proxy_protocol_tlv_validation (b)',
  ],
  [
    'v2 TLV overruns by one byte',
    v2('21', '11', `${V4_ADDR}02000361 62`),
    /overruns header end/,
    'haproxy proxy_protocol_tlv_validation (b)',
  ],
  [
    'v2 TLVs do not fill',
    v2('21', '11', `${V4_ADDR}0200`),
    /tlv header at byte 28 overruns/,
    'haproxy proxy_protocol_tlv_validation (c)',
  ],
  [
    'v2 duplicate TLV',
    v2('21', '11', V4_ADDR + tlvHex(2, Buffer.from('a')) + tlvHex(2, Buffer.from('b'))),
    /duplicate tlv 0x2/,
    'peers §2 v2',
  ],
  ['v2 unique_id > 128', v2('21', '11', V4_ADDR + tlvHex(5, Buffer.alloc(129))), /unique_id/, 'spec §2.2.6'],
  [
    'v2 SSL sub-TLV overruns',
    v2('21', '11', V4_ADDR + tlvHex(0x20, hex('0100000000 2100ff'))),
    /ssl sub-tlv/,
    'spec §2.2.5',
  ],
  [
    'v2 too long',
    v2('21', '11', V4_ADDR + tlvHex(0xe0, Buffer.alloc(4096))),
    /exceeds 4096/,
    'nginx NGX_PROXY_PROTOCOL_MAX_HEADER',
  ],
  ['neither v1 nor v2', Buffer.from('GET / HTTP/1.1\r\n'), /first byte 0x47/, 'spec §2.2 (never guess)'],
];

describe('parseProxyHeader vectors', () => {
  it.each(rows)('%s', (_name, bytes, want) => {
    const o = outcome(bytes);
    if (want instanceof RegExp) expect(o).toMatchObject({ code: 'SWB_ERR_PROXY_HEADER', message: want });
    else {
      expect(o).toMatchObject({ ok: { length: bytes.length, ...withoutUndefined(want) } });
      for (const [k, v] of Object.entries(want)) if (v === undefined) expect(o).not.toHaveProperty(`ok.${k}`);
    }
    expect(oneByteAtATime(bytes)).toEqual(o);
  });

  it.each(rows.filter((r) => !(r[2] instanceof RegExp)))(
    '%s: following bytes are not part of the header',
    (_n, bytes) => {
      const app = Buffer.from('\x16\x03\x01GET / HTTP/1.1\r\n');
      expect(parseProxyHeader(Buffer.concat([bytes, app]), 'any')?.length).toBe(bytes.length);
    },
  );

  it('refuses as early as the first impossible byte', () => {
    expect(outcome(Buffer.from('G'))).toMatchObject({ code: 'SWB_ERR_PROXY_HEADER' });
    expect(outcome(Buffer.from('PO'))).toMatchObject({ message: /expected "PROXY "/ });
    expect(outcome(Buffer.from('PROXY X'))).toMatchObject({ message: /unknown protocol/ });
    expect(outcome(hex('0d0a0d0a01'))).toMatchObject({ message: /signature mismatch at byte 4/ });
    expect(outcome(hex(`${SIG}21ff`))).toMatchObject({ message: /family/ });
    expect(outcome(hex(`${SIG}2111ffff`))).toMatchObject({ message: /exceeds 4096/ });
    expect(outcome(Buffer.from('PROXY TCP4 1.2.3.4 5'))).toEqual({ ok: undefined });
  });

  it('honours accept: v1 only, v2 only', () => {
    expect(outcome(v2('20', '00', ''), 'v1')).toMatchObject({ message: /cannot start a v1 header/ });
    expect(outcome(Buffer.from('PROXY UNKNOWN\r\n'), 'v2')).toMatchObject({ message: /cannot start a v2 header/ });
    expect(outcome(Buffer.from('PROXY UNKNOWN\r\n'), 'v1')).toMatchObject({ ok: { version: 1 } });
    expect(outcome(v2('20', '00', ''), 'v2')).toMatchObject({ ok: { version: 2 } });
  });

  it('never returns views into the caller buffer', () => {
    const buf = v2('21', '11', V4_ADDR + tlvHex(2, Buffer.from('example.com')));
    const h = parseProxyHeader(buf, 'v2')!;
    buf.fill(0);
    expect(h.tlvs.get(2)?.toString()).toBe('example.com');
  });
});

describe('crc32c (RFC 3720 §B.4 vectors)', () => {
  const iscsiRead = hex(
    '01c00000 00000000 00000000 00000000 14000000 00000400 00000014 00000018 28000000 00000000 02000000 00000000',
  );
  it.each([
    ['32 bytes of zeros', Buffer.alloc(32), 0x8a9136aa],
    ['32 bytes of 0xff', Buffer.alloc(32, 0xff), 0x62a8ab43],
    ['32 incrementing bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
    ['32 decrementing bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
    ['iSCSI read command PDU', iscsiRead, 0xd9963a56],
    ['"123456789" check value', Buffer.from('123456789'), 0xe3069283],
  ])('%s', (_n, data, want) => {
    expect(crc32c(data)).toBe(want);
    expect(crc32c(data.subarray(5), crc32c(data.subarray(0, 5)))).toBe(want);
  });
});

describe('encoders, round-tripped through proxy-protocol-js', () => {
  const src = { ip: '203.0.113.7', port: 51234 };
  const dst = { ip: '198.51.100.2', port: 443 };

  it('v1 ours → theirs and theirs → ours', () => {
    const ours = encodeProxyV1({ source: src, destination: dst });
    const theirs = V1ProxyProtocol.parse(ours.toString('latin1'));
    expect([theirs.inetProtocol, theirs.source.ipAddress, theirs.source.port]).toEqual(['TCP4', src.ip, src.port]);
    const built = new V1ProxyProtocol(INETProtocol.TCP6, new Peer('2001:db8::5', 1), new Peer('::1', 2)).build();
    expect(parseProxyHeader(Buffer.from(built), 'v1')).toMatchObject({
      family: 'tcp6',
      source: { ip: '2001:db8::5', port: 1 },
      destination: { ip: '::1', port: 2 },
    });
    expect(encodeProxyV1('unknown').toString()).toBe('PROXY UNKNOWN\r\n');
  });

  it('v2 theirs → ours (TCP4, TCP6, LOCAL with addresses); their trailing data is payload', () => {
    const a4 = new IPv4ProxyAddress(
      IPv4Address.createFrom([10, 0, 0, 1]),
      1000,
      IPv4Address.createFrom([10, 0, 0, 2]),
      2000,
    );
    const built = Buffer.from(
      new V2ProxyProtocol(Command.PROXY, TransportProtocol.STREAM, a4, new Uint8Array([7, 7])).build(),
    );
    expect(parseProxyHeader(built, 'v2')).toMatchObject({
      family: 'tcp4',
      source: { ip: '10.0.0.1', port: 1000 },
      destination: { ip: '10.0.0.2', port: 2000 },
      length: 28,
    });
    const six = Array.from({ length: 16 }, (_, i) => (i === 15 ? 1 : 0));
    const a6 = new IPv6ProxyAddress(IPv6Address.createFrom(six), 5, IPv6Address.createFrom(six), 6);
    const b6 = Buffer.from(new V2ProxyProtocol(Command.PROXY, TransportProtocol.DGRAM, a6).build());
    expect(parseProxyHeader(b6, 'v2')).toMatchObject({ family: 'udp6', source: { ip: '::1', port: 5 } });
    const local = Buffer.from(new V2ProxyProtocol(Command.LOCAL, TransportProtocol.STREAM, a4).build());
    expect(parseProxyHeader(local, 'v2')).toMatchObject({ command: 'local', length: 28 });
    expect(parseProxyHeader(local, 'v2')?.source).toBeUndefined();
  });

  it('v2 ours → theirs and ours → ours, with TLVs and CRC32C', () => {
    const ours = encodeProxyV2({
      command: 'proxy',
      source: src,
      destination: dst,
      authority: 'example.com',
      alpn: 'h2',
      crc32c: true,
    });
    const theirs = V2ProxyProtocol.parse(ours);
    const addr = theirs.proxyAddress as IPv4ProxyAddress;
    expect([theirs.command, addr.sourceAddress.address, addr.destinationPort]).toEqual([
      Command.PROXY,
      [203, 0, 113, 7],
      443,
    ]);
    expect(parseProxyHeader(ours, 'v2')).toMatchObject({
      family: 'tcp4',
      source: src,
      destination: dst,
      authority: 'example.com',
      alpn: 'h2',
      length: ours.length,
    });
    const local = encodeProxyV2Local();
    expect(local.length).toBe(16);
    expect(V2ProxyProtocol.parse(local).command).toBe(Command.LOCAL);
    expect(parseProxyHeader(local, 'v2')).toMatchObject({ command: 'local', length: 16 });
  });

  it('maps mixed families to IPv6 and demotes two IPv4-mapped addresses to IPv4 (peers §2 sender)', () => {
    const mixed = { source: { ip: '192.0.2.1', port: 1 }, destination: { ip: '2001:db8::1', port: 2 } };
    const h1 = parseProxyHeader(encodeProxyV1(mixed), 'v1');
    const h2 = parseProxyHeader(encodeProxyV2({ command: 'proxy', ...mixed }), 'v2');
    for (const h of [h1, h2]) expect(h).toMatchObject({ family: 'tcp6', source: { ip: '::ffff:192.0.2.1' } });
    const mapped = { source: { ip: '::ffff:192.0.2.1', port: 1 }, destination: { ip: '::FFFF:192.0.2.2', port: 2 } };
    expect(encodeProxyV1(mapped).toString()).toBe('PROXY TCP4 192.0.2.1 192.0.2.2 1 2\r\n');
    expect(parseProxyHeader(encodeProxyV2({ command: 'proxy', ...mapped }), 'v2')).toMatchObject({ family: 'tcp4' });
  });

  it('rejects bad encoder input with SWB_ERR_PROXY_HEADER', () => {
    const bad = [
      () => encodeProxyV1({ source: { ip: 'nope', port: 1 }, destination: dst }),
      () => encodeProxyV1({ source: src, destination: { ip: '1.2.3.4', port: 70000 } }),
      () => encodeProxyV2({ command: 'proxy', source: src }),
    ];
    for (const f of bad) expect(f).toThrow(expect.objectContaining({ code: 'SWB_ERR_PROXY_HEADER' }));
  });
});

describe('properties (fast-check)', () => {
  const prefixes = [
    Buffer.alloc(0),
    Buffer.from('PROXY '),
    Buffer.from('PROXY TCP4 '),
    hex(SIG),
    hex(`${SIG}21`),
    hex(`${SIG}2111`),
  ];
  const input = fc
    .tuple(fc.constantFrom(...prefixes), fc.uint8Array({ maxLength: 160 }))
    .map(([p, rest]) => Buffer.concat([p, rest]));
  const splits = fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 10 });

  it('never throws anything but SwitchboardError, and any split gives the same answer', () => {
    fc.assert(
      fc.property(input, splits, fc.constantFrom<ProxyAccept>('v1', 'v2', 'any'), (buf, sizes, accept) => {
        expect(fed(buf, sizes, accept)).toEqual(outcome(buf, accept));
      }),
      { numRuns: 2000 },
    );
  });

  it('encode → parse is the identity for valid endpoints', () => {
    const ep = fc.record({ ip: fc.oneof(fc.ipV4(), fc.ipV6()), port: fc.integer({ min: 0, max: 65535 }) });
    fc.assert(
      fc.property(ep, ep, (s, d) => {
        for (const buf of [
          encodeProxyV1({ source: s, destination: d }),
          encodeProxyV2({ command: 'proxy', source: s, destination: d, crc32c: true }),
        ]) {
          const h = parseProxyHeader(buf, 'any')!;
          expect([h.source?.port, h.destination?.port, h.length]).toEqual([s.port, d.port, buf.length]);
          expect(encodeProxyV1({ source: h.source!, destination: h.destination! })).toEqual(
            encodeProxyV1({ source: s, destination: d }),
          );
        }
      }),
    );
  });
});
