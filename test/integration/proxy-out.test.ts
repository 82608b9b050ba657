/**
 * Outbound PROXY headers (issue 9 §3, reference peers-reliability.md §2 "Sender"), decoded at the
 * test backend by an independent parser (`proxy-protocol-js`; TLVs walked by hand here):
 * one header as the first bytes of every new upstream connection, then the client's bytes
 * unmodified; v2 carries AUTHORITY and ALPN; mixed families are mapped to one; health probes
 * send v2 LOCAL or v1 with the router's own addresses.
 */
import {
  Command,
  type IPv4ProxyAddress,
  type IPv6ProxyAddress,
  V1ProxyProtocol,
  V2ProxyProtocol,
} from 'proxy-protocol-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProxyV1 } from '../../src/proxy-protocol/index.ts';
import { captureNodeHello } from '../fixtures/tls/hello-builder.ts';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { rawRequest } from '../harness/client.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

/** A backend that answers every chunk with a 200 and records what it got. */
function answering(name: string): Promise<TcpBackend> {
  return startTcpBackend(name, (socket) => socket.on('data', () => socket.write(OK)));
}

/** TLVs of a v2 header (type → value), walked from the length field: the oracle leaves them in `data`. */
function tlvsOf(header: Buffer, addressLength: number): Map<number, string> {
  const end = 16 + header.readUInt16BE(14);
  const out = new Map<number, string>();
  for (let pos = 16 + addressLength; pos < end; ) {
    const len = header.readUInt16BE(pos + 1);
    out.set(header[pos]!, header.subarray(pos + 3, pos + 3 + len).toString('latin1'));
    pos += 3 + len;
  }
  return out;
}

const v2Length = (b: Buffer) => 16 + b.readUInt16BE(14);
const SIG = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
const ip4 = (a: IPv4ProxyAddress['sourceAddress']) => a.address.join('.');
const hex16 = (a: IPv6ProxyAddress['sourceAddress']) => Buffer.from(a.address).toString('hex');

describe('PROXY out to backends', () => {
  let b1: TcpBackend;
  let b2: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    b1 = await answering('v1');
    b2 = await answering('v2');
    router = await startTestRouter({
      listeners: [
        { name: 'plain', address: '127.0.0.1:0' },
        { name: 'pp', address: '127.0.0.1:0', proxyProtocol: 'any', trustedSources: ['127.0.0.0/8'] },
        { name: 'hdr', address: '127.0.0.1:0', clientIpFrom: 'header', trustedSources: ['127.0.0.0/8'] },
      ],
      addressBook: {
        name: 'bfe',
        products: {
          web: {
            hosts: ['one.test', 'two.test'],
            rules: [
              { cond: 'req_host_in("one.test")', cluster: 'c1' },
              { cond: 'default_t()', cluster: 'c2' },
            ],
          },
        },
        clusters: {
          c1: { proxyProtocol: 'v1', subclusters: { a: { weight: 1, backends: [{ address: b1.address }] } } },
          c2: { proxyProtocol: 'v2', subclusters: { a: { weight: 1, backends: [{ address: b2.address }] } } },
        },
      },
    });
  });
  afterAll(async () => {
    await router?.close();
    await Promise.all([b1?.close(), b2?.close()]);
  });

  /** Sends `bytes`, then returns everything the backend's new connection received. */
  async function through(listener: string, backend: TcpBackend, bytes: Buffer, minLength: number): Promise<Buffer> {
    const before = backend.received.length;
    await rawRequest(router.port(listener), bytes, { timeoutMs: 500 });
    let got = Buffer.alloc(0);
    await eventually(() => {
      if (backend.received.length !== before + 1) return false;
      got = Buffer.concat(backend.received[before]!);
      return got.length >= minLength;
    });
    return got;
  }

  it('v1: the socket client and the listener address, then the request unmodified (spec §2.1)', async () => {
    const req = Buffer.from('GET /x HTTP/1.1\r\nHost: one.test\r\n\r\n', 'latin1');
    const got = await through('plain', b1, req, req.length + 20);
    const parsed = V1ProxyProtocol.parse(got.toString('latin1'));
    expect(parsed.inetProtocol).toBe('TCP4');
    expect(parsed.source.ipAddress).toBe('127.0.0.1');
    expect(parsed.destination.ipAddress).toBe('127.0.0.1');
    expect(parsed.destination.port).toBe(router.port('plain'));
    expect(parsed.data).toBe(req.toString('latin1'));
  });

  it('v2 behind a PROXY listener relays the advertised addresses, with AUTHORITY and ALPN from the ClientHello', async () => {
    const hello = await captureNodeHello({ servername: 'two.test', alpn: ['h2', 'http/1.1'] });
    const inbound = encodeProxyV1({
      source: { ip: '203.0.113.5', port: 4444 },
      destination: { ip: '198.51.100.1', port: 443 },
    });
    const got = await through('pp', b2, Buffer.concat([inbound, hello]), hello.length + 16);
    const parsed = V2ProxyProtocol.parse(got);
    expect(parsed.command).toBe(Command.PROXY);
    const a = parsed.proxyAddress as IPv4ProxyAddress;
    expect([ip4(a.sourceAddress), a.sourcePort]).toEqual(['203.0.113.5', 4444]);
    expect([ip4(a.destinationAddress), a.destinationPort]).toEqual(['198.51.100.1', 443]);
    const tlvs = tlvsOf(got, 12);
    expect(tlvs.get(0x02)).toBe('two.test'); // PP2_TYPE_AUTHORITY
    expect(tlvs.get(0x01)).toBe('h2'); // PP2_TYPE_ALPN: the first offered id
    expect(got.subarray(v2Length(got)).equals(hello)).toBe(true);
  });

  it('v2 on plain HTTP: AUTHORITY is the Host; a second request on the connection gets no second header', async () => {
    const req = 'GET /a HTTP/1.1\r\nHost: two.test\r\n\r\n';
    const twice = Buffer.from(req + req.replace('/a', '/b'), 'latin1');
    const got = await through('plain', b2, twice, 28 + twice.length);
    const n = v2Length(got);
    expect(tlvsOf(got, 12).get(0x02)).toBe('two.test');
    expect(got.subarray(n).equals(twice)).toBe(true);
    expect(got.indexOf(SIG, 1)).toBe(-1); // exactly one header (spec §2: never on a reused connection)
  });

  it('mixed families: an IPv6 client towards an IPv4 address is sent as TCP6 with the IPv4 side mapped', async () => {
    const req = Buffer.from('GET / HTTP/1.1\r\nHost: two.test\r\nX-Forwarded-For: 2001:db8::9\r\n\r\n', 'latin1');
    const got = await through('hdr', b2, req, req.length + 52);
    const parsed = V2ProxyProtocol.parse(got);
    expect(parsed.addressFamilyType).toBe(0x20); // INET6
    const a = parsed.proxyAddress as IPv6ProxyAddress;
    expect(hex16(a.sourceAddress)).toBe('20010db8000000000000000000000009');
    expect(hex16(a.destinationAddress)).toBe('00000000000000000000ffff7f000001'); // ::ffff:127.0.0.1
    expect(a.destinationPort).toBe(router.port('hdr'));
    expect(got.subarray(v2Length(got)).equals(req)).toBe(true);
  });
});

describe('health probes speak the cluster PROXY mode', () => {
  let tcpV2: TcpBackend;
  let tcpV1: TcpBackend;
  let httpV2: TcpBackend;
  let router: TestRouter;
  const fast = { interval: '50ms', timeout: '1s', active: true };

  beforeAll(async () => {
    tcpV2 = await startTcpBackend('tcp-v2');
    tcpV1 = await startTcpBackend('tcp-v1');
    // Answers 200 once a full request head has arrived after the header.
    httpV2 = await startTcpBackend('http-v2', (socket) => {
      let seen = '';
      socket.on('data', (c: Buffer) => {
        seen += c.toString('latin1');
        if (seen.includes('\r\n\r\n')) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      });
    });
    const cluster = (b: TcpBackend, proxyProtocol: string, healthCheck: object) => ({
      proxyProtocol,
      healthCheck,
      subclusters: { a: { weight: 1, backends: [{ address: b.address }] } },
    });
    router = await startTestRouter({
      addressBook: {
        name: 'bfe',
        products: { web: { hosts: ['h.test'], rules: [{ cond: 'default_t()', cluster: 'a' }] } },
        clusters: {
          a: cluster(tcpV2, 'v2', { ...fast, type: 'tcp' }),
          b: cluster(tcpV1, 'v1', { ...fast, type: 'tcp' }),
          c: cluster(httpV2, 'v2', { ...fast, type: 'http', path: '/health', failNum: 1 }),
        },
      },
    });
  });
  afterAll(async () => {
    await router?.close();
    await Promise.all([tcpV2?.close(), tcpV1?.close(), httpV2?.close()]);
  });

  /** The first probe connection that received something. */
  async function firstProbe(b: TcpBackend, min: number): Promise<Buffer> {
    let got = Buffer.alloc(0);
    await eventually(() => {
      const c = b.received.find((chunks) => Buffer.concat(chunks).length >= min);
      if (c !== undefined) got = Buffer.concat(c);
      return c !== undefined;
    });
    return got;
  }

  it('tcp probe, v2 cluster: a 16-byte LOCAL header (spec §2.2: LOCAL for health checks)', async () => {
    const got = await firstProbe(tcpV2, 16);
    expect(got.length).toBe(16);
    expect(V2ProxyProtocol.parse(got).command).toBe(Command.LOCAL);
  });

  it("tcp probe, v1 cluster: the router's own socket addresses, never UNKNOWN (spec §2.1)", async () => {
    const got = await firstProbe(tcpV1, 10);
    const parsed = V1ProxyProtocol.parse(got.toString('latin1'));
    expect(parsed.inetProtocol).toBe('TCP4');
    expect(parsed.source.ipAddress).toBe('127.0.0.1');
    expect(parsed.destination.ipAddress).toBe('127.0.0.1');
    expect(parsed.destination.port).toBe(tcpV1.port);
    expect(parsed.data).toBe('');
  });

  it('http probe, v2 cluster: LOCAL first, then the GET, and the backend stays up', async () => {
    const got = await firstProbe(httpV2, 40);
    expect(V2ProxyProtocol.parse(got).command).toBe(Command.LOCAL);
    expect(got.subarray(16).toString('latin1')).toMatch(/^GET \/health HTTP\/1\.1\r\n/);
    // failNum 1: one failed probe would take it down; several probes later it is still up.
    await eventually(() => httpV2.received.length >= 3);
    expect(router.router.runtime.registry.get(httpV2.address).available).toBe(true);
  });
});

describe('per-request routing with a forwarded client address', () => {
  let backend: TcpBackend;
  let router: TestRouter;

  beforeAll(async () => {
    // One 200 per request head received after the connection's PROXY v2 header (whose
    // signature itself starts with CRLF CRLF, so it is skipped first).
    backend = await startTcpBackend('pr', (socket) => {
      let seen = '';
      let header = true;
      socket.on('data', (c: Buffer) => {
        seen += c.toString('latin1');
        if (header) {
          if (seen.length < 16) return;
          seen = seen.slice(16 + Buffer.from(seen, 'latin1').readUInt16BE(14));
          header = false;
        }
        let i = seen.indexOf('\r\n\r\n');
        while (i >= 0) {
          socket.write(OK);
          seen = seen.slice(i + 4);
          i = seen.indexOf('\r\n\r\n');
        }
      });
    });
    router = await startTestRouter({
      routing: 'per-request',
      listeners: [{ name: 'hdr', address: '127.0.0.1:0', clientIpFrom: 'header', trustedSources: ['127.0.0.0/8'] }],
      addressBook: {
        name: 'bfe',
        products: { web: { hosts: ['two.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: { proxyProtocol: 'v2', subclusters: { a: { weight: 1, backends: [{ address: backend.address }] } } },
        },
      },
    });
  });
  afterAll(async () => {
    await router?.close();
    await backend?.close();
  });

  // KNOWN BUG (reported to the lead): per-request links are pooled by backend + PROXY mode only
  // (panels/net/upstream-link.ts `linkKey`), so the second request reuses a connection whose
  // header names the first request's client. Remove `.fails` once the key includes the client.
  it('a request naming another client does not reuse a connection whose header names the first', async () => {
    const req = (xff: string) => `GET / HTTP/1.1\r\nHost: two.test\r\nX-Forwarded-For: ${xff}\r\n\r\n`;
    const socket = (await import('node:net')).connect({ port: router.port('hdr'), host: '127.0.0.1' });
    socket.on('error', () => {});
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
    socket.write(req('192.0.2.1'));
    await eventually(() => got.split('HTTP/1.1 200').length === 2);
    socket.write(req('192.0.2.2'));
    await eventually(() => got.split('HTTP/1.1 200').length === 3);
    socket.destroy();
    const sources = backend.received.map((chunks) => {
      const a = V2ProxyProtocol.parse(Buffer.concat(chunks)).proxyAddress as IPv4ProxyAddress;
      return ip4(a.sourceAddress);
    });
    expect(sources).toEqual(['192.0.2.1', '192.0.2.2']);
  });
});
