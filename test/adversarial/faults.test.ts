/**
 * Fault injection with real sockets (issue 13 §2), in both routing modes. One recording backend
 * acts out a fault chosen by the request path; after each scenario the nothing-lost checker
 * reconciles client bytes, backend bytes and the access log, and nothing may leak.
 */
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closedPort, startBlackhole } from '../harness/backend.ts';
import { statusOf } from '../harness/client.ts';
import {
  type BackendConn,
  NothingLost,
  type RecordingBackend,
  startRecordingBackend,
  tag,
} from '../harness/nothing-lost.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import {
  acceptedSockets,
  connectionLines,
  expectNoLeaks,
  firstResult,
  resources,
  settle,
  waitForConnections,
} from './leaks.ts';

const MiB = 1024 * 1024;
const BIG = 50 * MiB;

/** Writes `total` bytes to `socket` honouring backpressure (stops when the socket dies). */
async function pump(write: (b: Buffer) => boolean, socket: Socket, total: number, chunk = 64 * 1024): Promise<void> {
  const block = Buffer.alloc(chunk, 0x61);
  let left = total;
  while (left > 0 && !socket.destroyed) {
    const n = Math.min(chunk, left);
    left -= n;
    if (!write(n === chunk ? block : block.subarray(0, n))) {
      await new Promise<void>((r) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          r();
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
    }
  }
}

/** Acts out the fault named in the first request line's path. */
function behave(conn: BackendConn): void {
  const s = conn.socket;
  s.once('data', (first: Buffer) => {
    const line = first.toString('latin1', 0, first.indexOf('\r\n'));
    if (line.includes('/ok')) {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello');
    } else if (line.includes('/reset')) {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial');
      setTimeout(() => s.resetAndDestroy(), 30);
    } else if (line.includes('/halfclose')) {
      // A close-delimited response: the FIN is the end of the body.
      s.write('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it');
      s.end();
    } else if (line.includes('/big')) {
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG}\r\n\r\n`);
      void pump((b) => s.write(b), s, BIG);
    } else if (line.includes('/noread')) {
      s.pause();
    }
    // '/silent' and '/upload': read and never answer.
  });
}

for (const routing of ['per-connection', 'per-request'] as const) {
  describe(`faults (${routing})`, () => {
    let backend: RecordingBackend;
    let router: TestRouter;
    let ledger: NothingLost;
    let baseline: Record<string, number>;

    beforeAll(async () => {
      backend = await startRecordingBackend(behave);
      const unreachable = await closedPort();
      router = await startTestRouter(
        {
          routing,
          operator: 'round-robin',
          addressBook: { name: 'file', path: 's.yaml' },
          limits: { idleTimeout: '800ms', connectTimeout: '300ms', peekTimeout: '2s' },
        },
        {
          dir: await tempDir({
            's.yaml': `- { host: "*", backends: [${backend.address}] }\n- { host: gone.test, backends: [127.0.0.1:${unreachable}] }\n`,
          }),
        },
      );
    });
    afterAll(async () => {
      await router.close();
      await backend.close();
    });
    beforeEach(() => {
      ledger = new NothingLost([backend]);
      router.access.length = 0;
      baseline = resources();
    });
    afterEach(async () => {
      for (const c of ledger.clients) if (!c.socket.destroyed) c.socket.destroy();
      await expectNoLeaks(router, baseline);
      expect(ledger.reconcile(router.access)).toEqual([]);
    });

    const get = (path: string, id: number, host = 'a.test') =>
      `GET /${path}/${tag(id)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

    it('a clean exchange: every byte both ways, logged ok', async () => {
      const c = await ledger.open(router.port());
      c.write(get('ok', c.id));
      await eventually(() => Buffer.concat(c.received).toString().endsWith('hello'));
      c.socket.end();
      await c.closed;
      expect(await firstResult(router)).toBe('ok');
    });

    it('backend resets mid-response: the client is closed, the line says why', async () => {
      const c = await ledger.open(router.port());
      c.write(get('reset', c.id));
      await c.closed;
      expect(Buffer.concat(c.received).toString()).toContain('partial');
      expect(await firstResult(router)).not.toBe('ok');
    });

    it('backend accepts and never answers: idle timeout closes both sides', async () => {
      const c = await ledger.open(router.port());
      c.write(get('silent', c.id));
      await c.closed;
      expect(await firstResult(router)).toBe('idle_timeout');
    });

    it('backend answers then half-closes: the whole response arrives, logged ok', async () => {
      const c = await ledger.open(router.port());
      c.write(get('halfclose', c.id));
      await eventually(() => Buffer.concat(c.received).toString().endsWith('all of it'));
      c.socket.end();
      await c.closed;
      expect(await firstResult(router)).toBe('ok');
    });

    it('client resets mid-upload: the backend connection goes too, the line says why', async () => {
      const c = await ledger.open(router.port());
      c.write(`POST /upload/${tag(c.id)} HTTP/1.1\r\nHost: a.test\r\nContent-Length: ${MiB}\r\n\r\n`);
      c.write(Buffer.alloc(100_000, 0x62));
      const linked = () => ledger.linked(c.id)[0];
      await eventually(() => (linked()?.receivedBytes().length ?? 0) > 50_000);
      c.abort();
      await eventually(() => linked()?.socket.destroyed === true || linked()?.socket.readableEnded === true);
      expect(await firstResult(router)).not.toBe('ok');
    });

    it('a client that never reads a 50 MiB response: the backend is paused, the router buffers little', async () => {
      const seen = acceptedSockets();
      try {
        const c = await ledger.open(router.port());
        c.socket.pause();
        c.write(get('big', c.id));
        await eventually(() => seen.sockets.length === 1 && ledger.linked(c.id).length === 1);
        const inRouter = seen.sockets[0]!;
        const back = ledger.linked(c.id)[0]!;
        const flushed = () => back.sentBytes().length - back.socket.writableLength;
        const plateau = await settle(flushed);
        // Loopback kernel buffers hold a few MiB each way; the rest must wait in the backend.
        expect(plateau).toBeLessThan(24 * MiB);
        expect(inRouter.writableLength).toBeLessThan(2 * MiB);
        c.abort();
        await firstResult(router);
      } finally {
        seen.stop();
      }
    });

    it('a backend that never reads a 50 MiB upload: the client is paused, the router buffers little', async () => {
      const seen = acceptedSockets();
      try {
        const c = await ledger.open(router.port());
        c.write(`POST /noread/${tag(c.id)} HTTP/1.1\r\nHost: a.test\r\nContent-Length: ${BIG}\r\n\r\n`);
        void pump((b) => c.write(b), c.socket, BIG);
        await eventually(() => seen.sockets.length === 1);
        const inRouter = seen.sockets[0]!;
        const plateau = await settle(() => inRouter.bytesRead);
        expect(plateau).toBeLessThan(24 * MiB);
        c.abort();
        // Reading again lets the backend see the router's close (a paused socket never would).
        for (const b of ledger.linked(c.id)) b.socket.resume();
        await firstResult(router);
      } finally {
        seen.stop();
      }
    });

    it('an unreachable backend (refused): 502 connect_failed, nothing reaches anyone', async () => {
      const c = await ledger.open(router.port());
      c.write(get('ok', c.id, 'gone.test'));
      await c.closed;
      expect(statusOf(Buffer.concat(c.received))).toBe(502);
      expect(await firstResult(router)).toBe('connect_failed');
    });

    it('a thousand connections abandoned mid-peek are each logged client_closed', async () => {
      const n = 1000;
      const batch = 100;
      for (let i = 0; i < n; i += batch) {
        const open = await Promise.all(Array.from({ length: batch }, () => ledger.open(router.port())));
        for (const c of open) c.write('GET /half HTTP/1.1\r\nHo');
        for (const c of open) c.abort();
      }
      await waitForConnections(router, n, 30_000);
      const results = new Set(connectionLines(router).map((r) => r.result));
      expect([...results]).toEqual(['client_closed']);
    });
  });
}

describe('faults: connect to a blackholed address', () => {
  it('times out (504 connect_timeout), logged, nothing leaked', async () => {
    const hole = await startBlackhole();
    const router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' }, limits: { connectTimeout: '300ms' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [127.0.0.1:${hole.port}] }\n` }) },
    );
    const baseline = resources();
    try {
      const ledger = new NothingLost([]);
      const c = await ledger.open(router.port());
      c.write('GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      await c.closed;
      expect(statusOf(Buffer.concat(c.received))).toBe(504);
      expect(await firstResult(router)).toBe('connect_timeout');
      await expectNoLeaks(router, baseline);
    } finally {
      await router.close();
      await hole.close();
    }
  });
});
