/**
 * Panel conformance scenarios for issue 39 items 1 and 3, part of the table of panel.ts:
 *
 * - Per-client caps behind a PROXY balancer: the client is the PROXY source, taken after the
 *   header (six clients through one balancer address are six clients; one client through six
 *   balancer addresses is one), and IPv6 sources count by `limits.clientIpv6Prefix` (/64).
 * - The admin listener's bounds: flooded with idle connections under a tight `ulimit -n` (real
 *   CLI, child process), it holds `admin.maxConnections` and the traffic listeners still serve
 *   `limits.maxConnections`; its head and idle deadlines close connections that say nothing.
 *
 * The PROXY headers are written here, byte by byte (v1 text, v2 binary), from 127.0.0.x source
 * addresses (the whole of 127/8 is loopback on Linux).
 */
import { writeFile } from 'node:fs/promises';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { THREAD_DESCRIPTORS } from '../../panels/worker/panel.ts';
import { maxConnectionsFor } from '../../src/process/nofile.ts';
import { startHttpBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type PanelUnderTest, panelKeys, type Scenario } from './panel-under-test.ts';

const HOST = 'www.example.test';

/** Every host to one cluster of `address`. */
function book(address: string): Record<string, unknown> {
  return {
    name: 'bfe',
    products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
    clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address }] } } } },
  };
}

/** A PROXY v1 header for a TCP4 client `ip`. */
function proxyV1(ip: string, port = 40_000): Buffer {
  return Buffer.from(`PROXY TCP4 ${ip} 198.51.100.1 ${port} 80\r\n`, 'latin1');
}

/** The 16 bytes of a full (uncompressed) IPv6 address `a:b:c:d:e:f:g:h`. */
function v6Bytes(ip: string): Buffer {
  const groups = ip.split(':');
  expect(groups).toHaveLength(8);
  const out = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) out.writeUInt16BE(Number.parseInt(g, 16), 2 * i);
  return out;
}

/** A PROXY v2 header (PROXY command, TCP over IPv6) for client `ip` (written in full, 8 groups). */
function proxyV2Tcp6(ip: string, port = 40_000): Buffer {
  const signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
  const fixed = Buffer.from([0x21, 0x21, 0x00, 36]); // v2 PROXY, AF_INET6 STREAM, 36 bytes
  const ports = Buffer.alloc(4);
  ports.writeUInt16BE(port, 0);
  ports.writeUInt16BE(443, 2);
  return Buffer.concat([signature, fixed, v6Bytes(ip), v6Bytes('2001:db8:ffff:0:0:0:0:1'), ports]);
}

/** A PROXY v2 header (PROXY command, TCP over IPv4) for client `ip`. */
function proxyV2Tcp4(ip: string, port: number): Buffer {
  const signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
  const body = Buffer.alloc(12);
  for (const [i, o] of [...ip.split('.').map(Number), 198, 51, 100, 1].entries()) body.writeUInt8(o, i);
  body.writeUInt16BE(port, 8);
  body.writeUInt16BE(443, 10);
  return Buffer.concat([signature, Buffer.from([0x21, 0x11, 0x00, 12]), body]);
}

/** What became of one connection: answered by the backend (and held open), or closed unanswered. */
interface Held {
  readonly outcome: 'served' | 'closed';
  readonly socket: Socket;
}

/**
 * Connects from `localAddress` to `host:port`, sends `prefix` and one keep-alive request, and
 * resolves once the backend's answer came (`served`, the socket held open) or the router closed
 * the connection first (`closed`); bounded at 4 s.
 */
function hold(port: number, prefix: Buffer, localAddress = '127.0.0.1', host = '127.0.0.1'): Promise<Held> {
  return new Promise((resolve) => {
    const socket = netConnect({ port, host, localAddress });
    let text = '';
    const done = (outcome: 'served' | 'closed') => {
      clearTimeout(timer);
      socket.removeAllListeners('data');
      resolve({ outcome, socket });
    };
    const timer = setTimeout(() => done('closed'), 4_000);
    socket.on('error', () => {});
    socket.on('connect', () =>
      socket.write(Buffer.concat([prefix, Buffer.from(`GET / HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, 'latin1')])),
    );
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (/\r\n\r\n[\s\S]*"backend"/.test(text)) done('served');
    });
    socket.once('close', () => done('closed'));
  });
}

/** Holds each of `specs` in turn (so the order of admission is the order given); outcomes in order. */
async function holdInTurn(
  port: number,
  specs: readonly { prefix: Buffer; from?: string }[],
  host = '127.0.0.1',
): Promise<Held[]> {
  const out: Held[] = [];
  for (const s of specs) out.push(await hold(port, s.prefix, s.from ?? (host === '::1' ? '::1' : '127.0.0.1'), host));
  return out;
}

/** A PROXY listener on `address` trusting `trusted`, per-client cap 3, to `backend`. */
function proxyConfig(address: string, trusted: string, backend: string): Record<string, unknown> {
  return {
    listeners: [{ name: 'web', address, proxyProtocol: 'any', trustedSources: [trusted] }],
    limits: { maxConnectionsPerClient: 3 },
    addressBook: book(backend),
  };
}

/** Starts the router for `p`, runs `body`, closes the router, the backend and every held socket. */
async function withProxyRouter(
  p: PanelUnderTest,
  address: string,
  trusted: string,
  body: (r: TestRouter, held: Held[]) => Promise<void>,
): Promise<void> {
  const web = await startHttpBackend('web');
  const held: Held[] = [];
  try {
    const r = await startTestRouter({ ...panelKeys(p), ...proxyConfig(address, trusted, web.address) });
    try {
      await body(r, held);
    } finally {
      for (const h of held) h.socket.destroy();
      await r.close();
    }
  } finally {
    await web.close();
  }
}

const outcomes = (held: readonly Held[]) => held.map((h) => h.outcome);

/** Whether this machine has IPv6 loopback (::1) to listen on. */
async function hasIpv6Loopback(): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(0, '::1', () => s.close(() => resolve(true)));
  });
}

/** The admin port of a router started by startTestRouter. */
function adminPort(r: TestRouter): number {
  const admin = r.router.admin;
  if (admin === undefined) throw new Error('no admin listener');
  return admin.address().port;
}

/** Opens a connection to `port` from `localAddress` and resolves once connected (bounded). */
function openIdle(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect({ port, host: '127.0.0.1', localAddress });
    const timer = setTimeout(() => reject(new Error('idle connection: no connect')), 4_000);
    s.on('error', () => {});
    // Flowing, so a close after an answer (a 408) is seen without reading it.
    s.resume();
    s.once('connect', () => {
      clearTimeout(timer);
      resolve(s);
    });
  });
}

/** Resolves true when `s` is closed by the other side within `ms`, having received nothing. */
function closesUnanswered(s: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    let got = 0;
    const timer = setTimeout(() => resolve(false), ms);
    s.on('data', (d) => (got += d.length));
    const closed = () => {
      clearTimeout(timer);
      resolve(got === 0);
    };
    if (s.destroyed) closed();
    else s.once('close', closed);
  });
}

/** Sends a keep-alive GET /healthz on `s`; true when it is answered 200 and then closed within `ms`. */
function answeredThenClosed(s: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve(false), ms);
    s.on('data', (d) => (text += d.toString('latin1')));
    s.once('close', () => {
      clearTimeout(timer);
      resolve(text.startsWith('HTTP/1.1 200'));
    });
    s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

/** GET /healthz on the admin port: the status, or 0 when the connection failed or closed. */
async function healthz(port: number): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

export const capsScenarios: readonly Scenario[] = [
  {
    name: 'maxConnectionsPerClient 3 behind PROXY: six clients through one balancer address are six clients',
    spec: 'issue 39 item 3: on PROXY listeners the per-client slot is keyed by the PROXY source',
    async run(p) {
      await withProxyRouter(p, '127.0.0.1:0', '127.0.0.0/8', async (r, held) => {
        const specs = [1, 2, 3, 4, 5, 6].map((i) => ({ prefix: proxyV1(`203.0.113.${i}`) }));
        held.push(...(await holdInTurn(r.port(), specs)));
        expect(outcomes(held)).toEqual(Array(6).fill('served'));
        // The balancer's own connections (a LOCAL v2 header: its health checks) count for no client.
        const local = Buffer.from([
          0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x20, 0, 0, 0,
        ]);
        held.push(...(await holdInTurn(r.port(), [{ prefix: local }, { prefix: local }, { prefix: local }])));
        expect(outcomes(held).slice(6)).toEqual(['served', 'served', 'served']);
      });
    },
  },
  {
    name: 'maxConnectionsPerClient 3 behind PROXY: one client through six balancer addresses is one client (overloaded, logged with its PROXY source)',
    spec: 'issue 39 item 3: the balancer’s connections are not the client; the client is counted across them',
    async run(p) {
      await withProxyRouter(p, '127.0.0.1:0', '127.0.0.0/8', async (r, held) => {
        const specs = [21, 22, 23, 24, 25, 26].map((i, n) => ({
          prefix: n % 2 === 0 ? proxyV1('203.0.113.9', 40_000 + n) : proxyV2Tcp4('203.0.113.9', 40_000 + n),
          from: `127.0.0.${i}`,
        }));
        held.push(...(await holdInTurn(r.port(), specs)));
        expect(outcomes(held)).toEqual(['served', 'served', 'served', 'closed', 'closed', 'closed']);
        await eventually(
          () => r.access.filter((a) => a.result === 'overloaded').length === 3,
          4_000,
          'three overloaded access lines',
        );
        const refused = r.access.filter((a) => a.result === 'overloaded');
        for (const a of refused) {
          expect(a.client).toMatch(/^203\.0\.113\.9:\d+$/);
          expect(a.reason).toContain('203.0.113.9');
        }
        // A place given back is a place again.
        held[0]!.socket.destroy();
        await eventually(
          async () => {
            const again = await hold(r.port(), proxyV1('203.0.113.9'), '127.0.0.27');
            held.push(again);
            return again.outcome === 'served';
          },
          4_000,
          'the client served again once one of its connections closed',
        );
      });
    },
  },
  {
    name: 'maxConnectionsPerClient 3 behind PROXY v2 over IPv6: sources count by their /64 (limits.clientIpv6Prefix)',
    spec: 'issue 39 item 3: IPv6 per-client keys aggregate by a configurable prefix, default /64',
    async run(p) {
      // A real IPv6 socket (::1) where the machine has one; 127.0.0.1 otherwise.
      const v6 = await hasIpv6Loopback();
      const address = v6 ? '[::1]:0' : '127.0.0.1:0';
      await withProxyRouter(p, address, v6 ? '::1/128' : '127.0.0.0/8', async (r, held) => {
        const sameHost = ['1', '2', 'ffff', 'abcd'].map((g) => ({ prefix: proxyV2Tcp6(`2001:db8:1:2:0:0:0:${g}`) }));
        const others = ['3', '4', '5'].map((g) => ({ prefix: proxyV2Tcp6(`2001:db8:1:${g}:0:0:0:1`) }));
        held.push(...(await holdInTurn(r.port(), [...sameHost, ...others], v6 ? '::1' : '127.0.0.1')));
        expect(outcomes(held)).toEqual(['served', 'served', 'served', 'closed', 'served', 'served', 'served']);
        await eventually(() => r.access.some((a) => a.result === 'overloaded'), 4_000, 'an overloaded line');
        expect(r.access.find((a) => a.result === 'overloaded')?.reason).toContain('2001:db8:1:2::/64');
      });
    },
  },
  {
    name: 'admin listener: idle connections are closed by admin.headersTimeout and admin.idleTimeout; admin.maxConnectionsPerClient closes the extra one unread',
    spec: 'issue 39 item 1: the admin listener has a per-peer cap and short header and idle timeouts',
    async run(p) {
      const web = await startHttpBackend('web');
      const sockets: Socket[] = [];
      try {
        const r = await startTestRouter({
          ...panelKeys(p),
          addressBook: book(web.address),
          admin: { address: '127.0.0.1:0', headersTimeout: '300ms', requestTimeout: '1s', idleTimeout: '1s' },
        });
        try {
          const port = adminPort(r);
          // No byte ever sent: closed by the head deadline (node:http answers it 408).
          const silent = await openIdle(port);
          sockets.push(silent);
          expect(
            await new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(false), 4_000);
              silent.once('close', () => {
                clearTimeout(timer);
                resolve(true);
              });
            }),
          ).toBe(true);
          // Answered, then silent on keep-alive: closed by the idle deadline.
          const kept = await openIdle(port);
          sockets.push(kept);
          expect(await answeredThenClosed(kept, 4_000)).toBe(true);
          // Eight connections of one peer (the default cap) are held; a ninth is closed unread.
          const from = '127.0.0.31';
          const eight: Socket[] = [];
          for (let i = 0; i < 8; i++) eight.push(await openIdle(port, from));
          sockets.push(...eight);
          const ninth = await openIdle(port, from);
          sockets.push(ninth);
          expect(await closesUnanswered(ninth, 2_000)).toBe(true);
          // Another peer is not held back by the first one's cap.
          expect(await healthz(port)).toBe(200);
        } finally {
          await r.close();
        }
      } finally {
        for (const s of sockets) s.destroy();
        await web.close();
      }
    },
  },
  {
    name: 'admin listener flooded (400 idle connections from 50 addresses, ulimit -n 256): it holds admin.maxConnections, the traffic listener serves limits.maxConnections',
    spec: 'issue 39 item 1: the admin listener is bounded and counted in the descriptor budget',
    // The CLI child starts in about 6 s on a busy 2-core machine.
    timeoutMs: 60_000,
    async run(p) {
      const web = await startHttpBackend('web');
      const dir = await tempDir();
      const file = join(dir, 'switchboard.yaml');
      // 72 × 2 (no idle upstreams kept) + 32 reserved + 64 admin = 240 of 256 descriptors on net
      // (the http2 panel holds fewer). Worker threads are counted apart (their event loops and
      // listeners: 2 × (8 + 1)), so there the budget is filled exactly: 71 × 2 + 32 + 64 + 18 =
      // 256, and every one of the 71 must still be served. Long admin deadlines: the cap is tested.
      const threads = typeof p.panel === 'object' && p.panel.name === 'worker' ? (p.panel.threads as number) : 0;
      const maxConnections = Math.min(72, maxConnectionsFor(256, 2, 64 + threads * (THREAD_DESCRIPTORS + 1)));
      const config = {
        ...panelKeys(p),
        listeners: [{ name: 'web', address: '127.0.0.1:0' }],
        limits: { maxConnections, maxIdleUpstreamsPerConnection: 0, drainTimeout: '1s' },
        addressBook: book(web.address),
        admin: { address: '127.0.0.1:0', headersTimeout: '60s', requestTimeout: '60s', idleTimeout: '60s' },
        log: { access: 'off' },
      };
      await writeFile(file, stringify(config));
      // --no-memory-reducer of our own: no re-exec, a faster start (src/process/memory-reducer.ts).
      const cli = spawnCli(file, { ulimit: 256, nodeArgs: ['--no-memory-reducer'] });
      const flood: Socket[] = [];
      const traffic: Held[] = [];
      try {
        const started = await cli.waitForLog((l) => l.msg === 'switchboard started');
        expect(started).toMatchObject({ nofile: 256, adminMaxConnections: 64 });
        const admin = Number(String(started.admin).split(':').pop());
        const port = await cli.port('web');
        let closedByRouter = 0;
        for (let a = 0; a < 50; a++) {
          const batch = await Promise.all(Array.from({ length: 8 }, () => openIdle(admin, `127.0.1.${a + 10}`)));
          for (const s of batch) s.once('close', () => closedByRouter++);
          flood.push(...batch);
        }
        // 8 per address is within admin.maxConnectionsPerClient: admin.maxConnections (64) decides.
        await eventually(() => closedByRouter >= 400 - 64, 8_000, 'the admin listener closing all but 64');
        expect(closedByRouter).toBe(400 - 64);
        expect(await healthz(admin)).toBe(0);
        // Every traffic connection up to limits.maxConnections is served, all held at once.
        traffic.push(...(await Promise.all(Array.from({ length: maxConnections }, () => hold(port, Buffer.alloc(0))))));
        expect(traffic.filter((h) => h.outcome === 'served')).toHaveLength(maxConnections);
        // The flood gone, the admin listener answers again.
        for (const s of flood) s.destroy();
        await eventually(async () => (await healthz(admin)) === 200, 8_000, 'admin answering again');
      } finally {
        for (const s of flood) s.destroy();
        for (const h of traffic) h.socket.destroy();
        cli.kill('SIGTERM');
        await cli.exited;
        await web.close();
      }
    },
  },
];
