/**
 * Trickled heads (issue 17 item 9): a head sent one byte per read must cost the peek O(n), like
 * a bare reader of the same bytes, for every peeker.
 *
 * 1. Through a real socket, a 64 KiB head (HTTP/1, TLS ClientHello, h2c) is fed one byte per
 *    read (the client writes the next byte only once the server has read the last), and the
 *    peek's own counters say: one read per byte, O(log n) buffer allocations, at most 3n bytes
 *    copied, and no `Buffer.concat` per read. The verdict equals the one on the whole head.
 * 2. Each incremental scanner resumes where it stopped: bytes of frames or records it has
 *    already validated are never read again (checked by corrupting them after validation: a
 *    scanner that re-walked would now refuse), and the HTTP/1 head scanner reads each byte O(1)
 *    times (counted through a Proxy).
 * Timing decides nothing here; bench/trickle.ts compares CPU with a bare reader.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GrowBuffer, type PeekWork } from '../../src/peek/grow-buffer.ts';
import { FLAG, FRAME } from '../../src/peek/h2-frames.ts';
import { H2cScanner, peekH2c } from '../../src/peek/h2c.ts';
import { HeadScanner } from '../../src/peek/http1-scan.ts';
import { type Peeked, peekSocket } from '../../src/peek/peek.ts';
import { ClientHelloScanner, peekClientHello } from '../../src/peek/tls-hello.ts';
import { block, frame, prelude } from '../fixtures/h2/build.ts';
import { ext, handshake, helloBody, records, sniExt } from '../fixtures/tls/hello-builder.ts';

const MAX = 128 * 1024;
const PAD = 64 * 1024;

/** A 64 KiB HTTP/1 head. */
function http1Head(): Buffer {
  return Buffer.from(`GET /x HTTP/1.1\r\nHost: trickle.test\r\nX-Pad: ${'p'.repeat(PAD)}\r\n\r\n`, 'latin1');
}

/** A 64 KiB ClientHello over five records (padding extension, RFC 7685). */
function tlsHello(): Buffer {
  // The extension block's length is 16 bits: the padding fills it almost to the brim.
  const message = handshake(helloBody([sniExt('trickle.test'), ext(21, Buffer.alloc(65_480))]));
  const cuts: number[] = [];
  for (let at = 16_000; at < message.length; at += 16_000) cuts.push(at);
  return records(message, cuts);
}

/** An h2c prelude and a 64 KiB header block over HEADERS + CONTINUATIONs. */
function h2cHead(): Buffer {
  const fields = block([
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/x'],
    [':authority', 'trickle.test'],
    ['x-pad', 'p'.repeat(PAD)],
  ]);
  const frames: Buffer[] = [prelude()];
  for (let at = 0; at < fields.length; at += 16_000) {
    const piece = fields.subarray(at, at + 16_000);
    const last = at + 16_000 >= fields.length;
    const type = at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION;
    const flags = (last ? FLAG.END_HEADERS : 0) | (at === 0 ? FLAG.END_STREAM : 0);
    frames.push(frame(type, flags, 1, piece));
  }
  return Buffer.concat(frames);
}

describe('a 64 KiB head trickled one byte per read through a socket', () => {
  let server: Server;
  const accepted: Socket[] = [];
  let waiting: ((s: Socket) => void) | undefined;

  beforeAll(async () => {
    server = createServer((s) => {
      s.pause();
      if (waiting !== undefined) waiting(s);
      else accepted.push(s);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** Sends `bytes` one per read and peeks them on the server side with counters. */
  async function trickle(bytes: Buffer): Promise<{ peeked: Peeked; work: PeekWork; concats: number }> {
    const port = (server.address() as AddressInfo).port;
    const serverSide = new Promise<Socket>((r) => {
      const s = accepted.shift();
      if (s !== undefined) r(s);
      else waiting = r;
    });
    const client = connect({ port, host: '127.0.0.1', noDelay: true });
    client.on('error', () => {});
    const socket = await serverSide;
    waiting = undefined;
    let sent = 0;
    const next = () => {
      if (sent < bytes.length) client.write(bytes.subarray(sent, ++sent));
    };
    // Our listener sees each read after the peek's: only then does the next byte leave.
    const work: PeekWork = { allocations: 0, bytesCopied: 0, reads: 0 };
    const spy = vi.spyOn(Buffer, 'concat');
    try {
      const peeking = peekSocket(socket, {
        peekTimeout: 60_000,
        maxHeaderBytes: MAX,
        tls: 'off',
        h2c: 'allow',
        proxy: undefined,
        work,
      });
      socket.on('data', next);
      next();
      const peeked = await peeking;
      return { peeked, work, concats: spy.mock.calls.length };
    } finally {
      spy.mockRestore();
      socket.removeListener('data', next);
      socket.destroy();
      client.destroy();
    }
  }

  const log2 = (n: number) => Math.ceil(Math.log2(n));

  it.each([
    ['http1', http1Head],
    ['tls', tlsHello],
    ['h2c', h2cHead],
  ] as const)(
    '%s: one read per byte, O(log n) allocations, ≤ 3n bytes copied, no concat per read',
    async (kind, make) => {
      const bytes = make();
      expect(bytes.length).toBeGreaterThan(PAD);
      const { peeked, work, concats } = await trickle(bytes);
      expect(peeked.kind).toBe(kind);
      expect(peeked.buffer.equals(bytes)).toBe(true);
      // At most the one join of a multi-record hello or a multi-frame header block, at the end
      // (the peek used to concatenate the whole buffer on every read: one call per byte).
      expect(concats).toBeLessThanOrEqual(2);
      expect(work.reads).toBe(bytes.length);
      expect(work.allocations).toBeLessThanOrEqual(log2(bytes.length));
      expect(work.bytesCopied).toBeLessThanOrEqual(3 * bytes.length);
      if (peeked.kind === 'http1') expect(peeked.head.host).toBe('trickle.test');
      if (peeked.kind === 'tls') expect(peeked.hello.sni).toBe('trickle.test');
      if (peeked.kind === 'h2c') expect(peeked.head.authority).toBe('trickle.test');
    },
  );
});

describe('GrowBuffer', () => {
  it('keeps the first read without a copy, then copies each read once into doubling stores', () => {
    const work: PeekWork = { allocations: 0, bytesCopied: 0, reads: 0 };
    const g = new GrowBuffer(1 << 20, work);
    const first = Buffer.from('a');
    expect(g.append(first)).toBe(first);
    expect(work).toEqual({ allocations: 0, bytesCopied: 0, reads: 1 });
    const all: number[] = [0x61];
    for (let i = 1; i < 100_000; i++) {
      const b = Buffer.from([i & 0xff]);
      all.push(i & 0xff);
      g.append(b);
    }
    expect(g.view().equals(Buffer.from(all))).toBe(true);
    expect(work.allocations).toBeLessThanOrEqual(8); // 1 KiB → 128 KiB
    expect(work.bytesCopied).toBeLessThan(3 * 100_000);
  });

  it('stops doubling at the limit, and doubles again only past it', () => {
    const work: PeekWork = { allocations: 0, bytesCopied: 0, reads: 0 };
    const g = new GrowBuffer(3000, work);
    for (let i = 0; i < 3000; i++) g.append(Buffer.from([1]));
    expect(work.allocations).toBe(3); // 1024, 2048, 3000
    for (let i = 0; i < 3000; i++) g.append(Buffer.from([2]));
    expect(work.allocations).toBe(4); // 6002: one more store for the whole tail
    expect(g.length).toBe(6000);
  });
});

describe('incremental scanners never re-read what they validated', () => {
  it('ClientHelloScanner: records already walked are not walked again', () => {
    const hello = tlsHello();
    const scanner = new ClientHelloScanner(MAX);
    const firstRecordEnd = 5 + hello.readUInt16BE(3);
    const buf = Buffer.from(hello);
    expect(scanner.feed(buf.subarray(0, firstRecordEnd + 3))).toBeUndefined();
    // Corrupt the first record's header: a scanner that re-walked from byte 0 would refuse now.
    buf[0] = 0x17;
    expect(() => peekClientHello(buf, MAX)).toThrow(/first byte 0x17/);
    expect(scanner.feed(buf)?.sni).toBe('trickle.test');
  });

  it('H2cScanner: frames already validated are not validated again', () => {
    const settings = frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 2, 0, 0, 0, 1])); // enable_push 1
    const rest = h2cHead().subarray(prelude().length);
    const buf = Buffer.concat([prelude().subarray(0, 24), settings, rest]);
    const scanner = new H2cScanner(MAX);
    expect(scanner.feed(buf.subarray(0, 24 + settings.length + 3))).toBeUndefined();
    // enable_push 5 is a PROTOCOL_ERROR: a stateless re-walk would refuse the grown buffer.
    buf[24 + 9 + 5] = 5;
    expect(() => peekH2c(buf, MAX)).toThrow(/enable_push 5/);
    expect(scanner.feed(buf)?.authority).toBe('trickle.test');
  });

  it('HeadScanner (HTTP/1): each byte is read O(1) times when fed one byte at a time', () => {
    const head = http1Head();
    let reads = 0;
    const scanner = new HeadScanner('request', MAX);
    let end = -1;
    for (let n = 1; n <= head.length && end === -1; n++) {
      const view = new Proxy(head.subarray(0, n), {
        get(target, key) {
          if (typeof key === 'string' && key.charCodeAt(0) >= 0x30 && key.charCodeAt(0) <= 0x39) reads++;
          return Reflect.get(target, key);
        },
      });
      end = scanner.scan(view);
    }
    expect(end).toBe(head.length);
    expect(reads).toBeLessThanOrEqual(2 * head.length);
  });
});
