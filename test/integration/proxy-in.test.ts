/**
 * Inbound PROXY headers end to end (reference peers-reliability.md §2, haproxy
 * `proxy-protocol.txt`): vectors built by an independent encoder (`proxy-protocol-js`, TLVs and
 * CRC32C by hand here), sent to the real router on PROXY listeners. An accepted header is
 * stripped, its source is the client in the access log, and the bytes after it reach the backend
 * unmodified; a rejected one closes the connection with `proxy_rejected` and no backend is hit.
 */
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIp } from '../../src/base/ip.ts';
import { block, headers as h2Headers, prelude } from '../fixtures/h2/build.ts';
import { captureNodeHello } from '../fixtures/tls/hello-builder.ts';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

// ---- vectors, built independently of src/proxy-protocol ----

/** A v1 line from proxy-protocol-js. */
function v1(proto: 'TCP4' | 'TCP6' | 'UNKNOWN', src: string, sport: number, dst: string, dport: number): Buffer {
  const p = INETProtocol[proto];
  return Buffer.from(new V1ProxyProtocol(p, new Peer(src, sport), new Peer(dst, dport)).build(), 'latin1');
}

function bytesOf(ip: string): number[] {
  const parsed = parseIp(ip);
  if (parsed === undefined) throw new Error(`bad test ip ${ip}`);
  return [...(parsed.family === 4 ? parsed.bytes.subarray(12) : parsed.bytes)];
}

/**
 * A v2 header from proxy-protocol-js with `tlvs` appended. The library does not count its
 * `data` in the length field, so bytes 14-15 are set here to cover address block + TLVs.
 */
function v2(
  command: 'proxy' | 'local',
  src: string,
  sport: number,
  dst: string,
  dport: number,
  tlvs: Buffer = Buffer.alloc(0),
): Buffer {
  const address = src.includes(':')
    ? new IPv6ProxyAddress(IPv6Address.createFrom(bytesOf(src)), sport, IPv6Address.createFrom(bytesOf(dst)), dport)
    : new IPv4ProxyAddress(IPv4Address.createFrom(bytesOf(src)), sport, IPv4Address.createFrom(bytesOf(dst)), dport);
  const cmd = command === 'proxy' ? Command.PROXY : Command.LOCAL;
  const out = Buffer.from(new V2ProxyProtocol(cmd, TransportProtocol.STREAM, address, tlvs).build());
  out.writeUInt16BE(out.length - 16, 14);
  return out;
}

function tlv(type: number, value: Buffer | string): Buffer {
  const v = typeof value === 'string' ? Buffer.from(value, 'latin1') : value;
  const h = Buffer.from([type, 0, 0]);
  h.writeUInt16BE(v.length, 1);
  return Buffer.concat([h, v]);
}

/** CRC32C (Castagnoli, reflected 0x82F63B78), bit by bit: slow, obviously right, independent. */
function crc32c(buf: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of buf) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A v2 PROXY header whose last TLV is a CRC32C over the whole header (`corrupt` flips it). */
function v2WithCrc(corrupt: boolean): Buffer {
  const h = v2(
    'proxy',
    '203.0.113.9',
    40009,
    '198.51.100.1',
    443,
    Buffer.concat([tlv(0x02, 'crc.test'), tlv(0x03, Buffer.alloc(4))]),
  );
  const crc = crc32c(h);
  h.writeUInt32BE(corrupt ? crc ^ 1 : crc, h.length - 4);
  return h;
}

const http = (path: string) => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: www.example.test\r\n\r\n`, 'latin1');

// ---- router and backend ----

let backend: TcpBackend;
let router: TestRouter;
const TRUSTED = ['127.0.0.0/8', '::1/128'];

beforeAll(async () => {
  backend = await startTcpBackend('tcp', (socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
  });
  router = await startTestRouter({
    listeners: [
      { name: 'any', address: '127.0.0.1:0', proxyProtocol: 'any', trustedSources: TRUSTED },
      { name: 'v1', address: '127.0.0.1:0', proxyProtocol: 'v1', trustedSources: TRUSTED },
      // h2c: allow: the h2c case below checks the splice's bytes (route is the per-request default).
      { name: 'v2', address: '127.0.0.1:0', proxyProtocol: 'v2', trustedSources: TRUSTED, h2c: 'allow' },
      { name: 'plain', address: '127.0.0.1:0' },
      { name: 'untrusted', address: '127.0.0.1:0', proxyProtocol: 'any', trustedSources: ['10.0.0.0/8'] },
      { name: 'slow', address: '127.0.0.1:0', proxyProtocol: 'any', trustedSources: TRUSTED },
    ],
    limits: { peekTimeout: '3s' },
    addressBook: {
      name: 'bfe',
      defaultProduct: 'web',
      products: { web: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
      clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: backend.address }] } } } },
    },
  });
});
afterAll(async () => {
  await router?.close();
  await backend?.close();
});

/** Sends `bytes` to a listener and returns the access record of that connection and the reply. */
async function send(listener: string, bytes: Buffer, chunkSize?: number) {
  const before = router.access.length;
  const hitsBefore = backend.hits;
  const reply = await rawRequest(
    router.port(listener),
    bytes,
    chunkSize === undefined ? {} : { chunkSize, delayMs: 1 },
  );
  await router.waitForAccess(before + 1);
  const record = router.access[before]!;
  return { reply, record, newConnections: backend.received.slice(hitsBefore) };
}

/** Waits until the backend connection has received exactly `want`. */
async function expectForwarded(conns: Buffer[][], want: Buffer): Promise<void> {
  await eventually(() => conns.length === 1 && Buffer.concat(conns[0]!).equals(want), 5000, 'forwarded bytes');
}

describe('accepted headers: the source is the client, the header is stripped', () => {
  it.each([
    // [case, listener, header, client, source]
    ['v1 TCP4', 'any', () => v1('TCP4', '203.0.113.7', 40001, '198.51.100.1', 80), '203.0.113.7:40001', 'spec §2.1'],
    ['v1 TCP6', 'any', () => v1('TCP6', '2001:db8::7', 40002, '2001:db8::1', 80), '2001:db8::7:40002', 'spec §2.1'],
    [
      'v1 on a v1 listener',
      'v1',
      () => v1('TCP4', '203.0.113.3', 40003, '198.51.100.1', 80),
      '203.0.113.3:40003',
      'spec §2',
    ],
    ['v2 TCP4', 'any', () => v2('proxy', '203.0.113.4', 40004, '198.51.100.1', 80), '203.0.113.4:40004', 'spec §2.2'],
    ['v2 TCP6', 'v2', () => v2('proxy', '2001:db8::5', 40005, '2001:db8::1', 80), '2001:db8::5:40005', 'spec §2.2'],
    [
      'v2 with ALPN, AUTHORITY, NOOP and UNIQUE_ID TLVs',
      'v2',
      () =>
        v2(
          'proxy',
          '203.0.113.6',
          40006,
          '198.51.100.1',
          443,
          Buffer.concat([
            tlv(0x01, 'h2'),
            tlv(0x02, 'www.example.test'),
            tlv(0x04, Buffer.alloc(3)),
            tlv(0x05, 'id-1'),
          ]),
        ),
      '203.0.113.6:40006',
      'spec §2.2.1-2.2.5',
    ],
    ['v2 with a valid CRC32C', 'any', () => v2WithCrc(false), '203.0.113.9:40009', 'spec §2.2.5'],
  ])('%s (%s listener)', async (_name, listener, header, client) => {
    const path = `/in-${listener}-${client}`;
    const payload = http(path);
    const { reply, record, newConnections } = await send(listener, Buffer.concat([header(), payload]));
    expect(statusOf(reply)).toBe(200);
    expect(record.result).toBe('ok');
    expect(record.client).toBe(client);
    expect(record.path).toBe(path);
    await expectForwarded(newConnections, payload);
  });

  it.each([
    [
      'v1 UNKNOWN: the socket peer stays the client (spec §2.1)',
      () => v1('UNKNOWN', '203.0.113.1', 1, '198.51.100.1', 2),
    ],
    [
      'v2 LOCAL with an address block: skipped, the socket peer is the client (spec §2.2)',
      () => v2('local', '203.0.113.1', 1, '198.51.100.1', 2),
    ],
  ])('%s', async (_name, header) => {
    const payload = http('/local');
    const { record, newConnections } = await send('any', Buffer.concat([header(), payload]));
    expect(record.result).toBe('ok');
    expect(record.client).toMatch(/^(::ffff:)?127\.0\.0\.1:\d+$/);
    expect(record.client).not.toContain('203.0.113.1');
    await expectForwarded(newConnections, payload);
  });

  it.each([
    ['v1', () => v1('TCP4', '203.0.113.10', 40010, '198.51.100.1', 80)],
    ['v2', () => v2('proxy', '203.0.113.11', 40011, '198.51.100.1', 80, tlv(0x02, 'www.example.test'))],
  ])('%s split one byte per write, head included (spec §2: tolerate split reads)', async (_name, header) => {
    const payload = http('/split');
    const { record, newConnections } = await send('any', Buffer.concat([header(), payload]), 1);
    expect(record.result).toBe('ok');
    expect(record.client).toMatch(/^203\.0\.113\.1[01]:4001[01]$/);
    await expectForwarded(newConnections, payload);
  });

  it('keeps a TLS ClientHello that arrives in the same write and peeks it (SNI routing)', async () => {
    const hello = await captureNodeHello({ servername: 'www.example.test', alpn: ['h2'] });
    const { record, newConnections } = await send(
      'any',
      Buffer.concat([v1('TCP4', '203.0.113.12', 40012, '198.51.100.1', 443), hello]),
    );
    expect(record.protocol).toBe('tls');
    expect(record.host).toBe('www.example.test');
    expect(record.client).toBe('203.0.113.12:40012');
    await expectForwarded(newConnections, hello);
  });

  it('keeps an h2c preface and HEADERS that arrive in the same write and peeks them', async () => {
    const h2 = Buffer.concat([
      prelude(),
      h2Headers(
        block([
          [':method', 'GET'],
          [':scheme', 'http'],
          [':authority', 'www.example.test'],
          [':path', '/h2c'],
        ]),
      ),
    ]);
    const { record, newConnections } = await send(
      'v2',
      Buffer.concat([v2('proxy', '203.0.113.13', 40013, '198.51.100.1', 80), h2]),
    );
    expect(record.protocol).toBe('h2c');
    expect(record.path).toBe('/h2c');
    expect(record.client).toBe('203.0.113.13:40013');
    await expectForwarded(newConnections, h2);
  });
});

describe('rejected: closed with proxy_rejected, nothing reaches a backend', () => {
  const tooLongV1 = (): Buffer =>
    Buffer.from(`PROXY TCP4 203.0.113.1 198.51.100.1 1 2${' '.repeat(100)}\r\n`, 'latin1');
  const tooLongV2 = () => {
    const h = v2('proxy', '203.0.113.1', 1, '198.51.100.1', 2, tlv(0xe0, Buffer.alloc(5000)));
    return h;
  };
  const wrongSignature = () => {
    const h = v2('proxy', '203.0.113.1', 1, '198.51.100.1', 2);
    h[7] = 0x00; // inside the 12-byte signature
    return h;
  };
  const tlvOverrun = () => {
    const h = v2('proxy', '203.0.113.1', 1, '198.51.100.1', 2, tlv(0x02, 'abcd'));
    h.writeUInt16BE(10, h.length - 6); // the TLV claims 10 bytes, 4 remain
    return h;
  };
  const badVersion = () => {
    const h = v2('proxy', '203.0.113.1', 1, '198.51.100.1', 2);
    h[12] = 0x11; // version 1 in a v2 header
    return h;
  };
  it.each([
    ['bad CRC32C (spec §2.2.5)', 'any', () => v2WithCrc(true)],
    ['v1 without CRLF within 107 bytes (spec §2.1)', 'any', tooLongV1],
    ['v2 longer than the 4096-byte cap (nginx cap)', 'any', tooLongV2],
    ['wrong v2 signature (spec §2.2)', 'any', wrongSignature],
    ['a TLV overrunning the header (haproxy proxy_protocol_tlv_validation.vtc)', 'v2', tlvOverrun],
    ['version nibble not 2 (spec §2.2)', 'v2', badVersion],
    [
      'v1 with a leading zero in an octet (spec §2.1)',
      'v1',
      () => Buffer.from('PROXY TCP4 203.0.113.01 198.51.100.1 1 2\r\n', 'latin1'),
    ],
    [
      'v1 TCP4 naming an IPv6 address (spec §2.1)',
      'v1',
      () => Buffer.from('PROXY TCP4 2001:db8::1 198.51.100.1 1 2\r\n', 'latin1'),
    ],
    ['v2 on a v1-only listener', 'v1', () => v2('proxy', '203.0.113.1', 1, '198.51.100.1', 2)],
    ['v1 on a v2-only listener', 'v2', () => v1('TCP4', '203.0.113.1', 1, '198.51.100.1', 2)],
    ['missing on a PROXY listener (never guessed, spec §2)', 'any', () => Buffer.alloc(0)],
    ['a valid header from outside trustedSources', 'untrusted', () => v1('TCP4', '203.0.113.1', 1, '198.51.100.1', 2)],
  ])('%s', async (_name, listener, header) => {
    const { reply, record, newConnections } = await send(listener, Buffer.concat([header(), http('/rejected')]));
    expect(reply.length).toBe(0);
    expect(record.result).toBe('proxy_rejected');
    expect(record.client).toMatch(/^(::ffff:)?127\.0\.0\.1:\d+$/);
    expect(newConnections).toHaveLength(0);
  });

  it('counts the header inside peekTimeout: a header that never completes is rejected', async () => {
    const partial: Buffer = v1('TCP4', '203.0.113.1', 1, '198.51.100.1', 2).subarray(0, 20);
    const { reply, record, newConnections } = await send('slow', partial);
    expect(reply.length).toBe(0);
    expect(record.result).toBe('proxy_rejected');
    expect(newConnections).toHaveLength(0);
  });
});

describe('never auto-detected on a listener that does not expect it', () => {
  it.each([
    ['v1', () => v1('TCP4', '203.0.113.1', 1, '198.51.100.1', 2)],
    ['v2', () => v2('proxy', '203.0.113.1', 1, '198.51.100.1', 2)],
  ])('a %s header on a plain listener is not stripped: 400, the socket peer is the client', async (_name, header) => {
    const { reply, record, newConnections } = await send('plain', Buffer.concat([header(), http('/plain')]));
    expect(statusOf(reply)).toBe(400);
    expect(record.result).toBe('bad_request');
    expect(record.client).not.toContain('203.0.113.1');
    expect(newConnections).toHaveLength(0);
  });
});
