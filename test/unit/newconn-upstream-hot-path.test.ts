/**
 * The upstream side of the per-connection path (issue 18, new connection per request): what a
 * connect costs besides node's own socket. Counted, never timed: a plain socket's TLS facts are
 * read without an `instanceof` walk, the first attempt of every request is one shared Attempt,
 * and a dialled socket's listeners are shared functions, not a closure and a `once` wrapper each.
 */
import { createServer, type Server, Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackendRegistry } from '../../src/contracts/backend-registry.ts';
import type { Attempt, Backend, Candidates, Jack, Request } from '../../src/contracts/types.ts';
import { tlsFactsOf } from '../../src/tls/facts.ts';
import { ConnectError } from '../../src/upstream/connect.ts';
import { dialThen, tryJacksThen } from '../../src/upstream/index.ts';

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  server?.close();
});

describe('new connection hot path, upstream side', () => {
  it('tells a plain socket from a TLS one without calling instanceof', () => {
    let calls = 0;
    Object.defineProperty(TLSSocket, Symbol.hasInstance, {
      configurable: true,
      value: (x: unknown) => {
        calls++;
        return Function.prototype[Symbol.hasInstance].call(TLSSocket, x);
      },
    });
    try {
      const plain = new Socket();
      expect(tlsFactsOf(plain)).toBeUndefined();
      expect(calls).toBe(0);
    } finally {
      delete (TLSSocket as unknown as Record<symbol, unknown>)[Symbol.hasInstance];
    }
  });

  it('hands every request the same frozen first Attempt; a retry gets its own', () => {
    const seen: Attempt[] = [];
    const backend = { id: '127.0.0.1:1', host: '127.0.0.1', port: 1 } as Backend;
    const jack: Jack = { backend, subcluster: 'a' };
    const operator = {
      findJack: (_r: Request, _c: Candidates, attempt: Attempt) => {
        seen.push(attempt);
        return jack;
      },
    };
    const candidates = { policy: { retries: 1, crossRetries: 0 } } as unknown as Candidates;
    const results: unknown[] = [];
    for (let i = 0; i < 2; i++)
      tryJacksThen<string>(
        {} as Request,
        candidates,
        operator as never,
        (_jack, _n, done) => done(undefined, 'ok'),
        (err, outcome) => results.push(err ?? outcome),
      );
    expect(results).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(seen[0]).toMatchObject({ number: 1, subclusters: [] });
    expect(seen[0]!.failed.size).toBe(0);
    // A failed first try: the retry's Attempt carries the failure, the shared one stays empty.
    seen.length = 0;
    let tries = 0;
    tryJacksThen<string>(
      {} as Request,
      candidates,
      operator as never,
      (_jack, _n, done) =>
        tries++ === 0 ? done(new ConnectError('refused', false), undefined) : done(undefined, 'ok'),
      () => {},
    );
    expect(seen).toHaveLength(2);
    expect(seen[1]).not.toBe(seen[0]);
    expect([...seen[1]!.failed]).toEqual(['127.0.0.1:1']);
    expect(seen[0]!.failed.size).toBe(0);
  });

  it("dials with shared listeners: no closure or once wrapper per connection, the registry hears 'close'", async () => {
    server = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const backend = { id: `127.0.0.1:${port}`, host: '127.0.0.1', port } as Backend;
    const events: string[] = [];
    const registry = {
      connected: (id: string) => events.push(`connected ${id}`),
      closed: (id: string) => events.push(`closed ${id}`),
      connectFailed: (id: string) => events.push(`failed ${id}`),
    } as unknown as BackendRegistry;
    const plan = {
      host: { registry, noteExhausted: () => {} },
      cluster: 'c',
      connectTimeout: 5000,
      tls: undefined,
      proxyHeader: undefined,
      allowHalfOpen: true,
    };
    const dialled = await Promise.all(
      [1, 2].map(
        () =>
          new Promise<Socket>((resolve, reject) =>
            dialThen(backend, plan, 1, (err, s) => (err === undefined ? resolve(s!) : reject(err))),
          ),
      ),
    );
    sockets.push(...dialled);
    const [a, b] = dialled as [Socket, Socket];
    for (const event of ['close', 'error', 'connect']) expect(a.rawListeners(event)).toEqual(b.rawListeners(event));
    expect(a.rawListeners('close').length).toBeGreaterThan(0);
    const closed = new Promise((r) => b.once('close', r));
    b.destroy();
    await closed;
    expect(events).toEqual([`connected ${backend.id}`, `connected ${backend.id}`, `closed ${backend.id}`]);
  });
});
