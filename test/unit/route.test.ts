/**
 * The routing decision every panel shares (src/routing/route.ts): CONNECT refusal, no_route, the
 * `switchboard:route:decided` channel and the access record.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccessRecord } from '../../src/base/log.ts';
import type { Candidates, Request } from '../../src/contracts/types.ts';
import { decideRoute, isRouteRefused } from '../../src/routing/route.ts';
import { backend, candidates, request, sub } from '../conformance/operator.ts';

const web = candidates([sub('a', 1, [backend(8080)])], {}, 'web');
const book = (found: Candidates | undefined) => ({ book: { findAddresses: (_r: Request) => found } as never });
const listener = { name: 'main', allowConnect: false };
const record = (): AccessRecord => ({
  listener: 'main',
  client: '192.0.2.1:40000',
  bytesIn: 0,
  bytesOut: 0,
  durationMs: 0,
  result: 'ok',
});

describe('decideRoute', () => {
  const seen: unknown[] = [];
  const onMessage = (m: unknown) => seen.push(m);
  afterEach(() => {
    unsubscribe('switchboard:route:decided', onMessage);
    seen.length = 0;
  });

  it("returns the book's own Candidates and writes product and cluster into the record", () => {
    const r = record();
    const decided = decideRoute(book(web), listener, request(), r);
    expect(decided).toBe(web);
    expect(isRouteRefused(decided)).toBe(false);
    expect(r).toMatchObject({ product: 'p', cluster: 'web' });
  });

  it('refuses no_route when the book has nothing, and leaves the record without a route', () => {
    const r = record();
    const decided = decideRoute(book(undefined), listener, request(), r);
    expect(decided).toEqual({ refused: 'no_route', reason: undefined });
    expect(r.product).toBeUndefined();
  });

  it('refuses an HTTP/1 CONNECT on a listener without allowConnect before asking the book', () => {
    let asked = 0;
    const engine = {
      book: {
        findAddresses: () => {
          asked++;
          return web;
        },
      } as never,
    };
    const connect = { ...request(), method: 'CONNECT' };
    const decided = decideRoute(engine, listener, connect, record());
    expect(decided).toEqual({ refused: 'method_not_allowed', reason: 'CONNECT is not allowed on listener main' });
    expect(asked).toBe(0);
    expect(decideRoute(engine, { ...listener, allowConnect: true }, connect, record())).toBe(web);
    // h2c CONNECT is not an HTTP/1 tunnel request: routed as before.
    expect(decideRoute(engine, listener, { ...connect, protocol: 'h2c' }, record())).toBe(web);
  });

  it('publishes every decision on switchboard:route:decided, with the client socket when given', () => {
    subscribe('switchboard:route:decided', onMessage);
    const socket = new Socket();
    const r = request();
    decideRoute(book(web), listener, r, record(), socket);
    decideRoute(book(undefined), listener, r, record());
    expect(seen).toEqual([
      { request: r, candidates: web, listener: listener.name, socket },
      { request: r, candidates: undefined, listener: listener.name },
    ]);
    expect(Object.hasOwn(seen[1] as object, 'socket')).toBe(false);
    socket.destroy();
  });
});
