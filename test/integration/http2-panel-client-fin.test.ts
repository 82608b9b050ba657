/**
 * A client's FIN on the http2 panel. The pipeline accepts half-open sockets (the net panel's
 * splice forwards a FIN) and node's HTTP/2 session does not act on one, so the panel does: the
 * client can send no more frames, so its open streams are finished and the connection closed,
 * instead of a session held to `idleTimeout`. A connection that closes before its first request
 * gets one access line (`client_closed`), as on the net panel.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAME } from '../../src/peek/h2-frames.ts';
import { block, frame, framesOf, headers, prelude } from '../fixtures/h2/build.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';

/** Sends `bytes` and a FIN; resolves with what came back and whether the router closed first. */
function sendThenFin(port: number, bytes: Buffer): Promise<{ reply: Buffer; closedByRouter: boolean }> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    // Far below the 60 s idleTimeout and peekTimeout: only the FIN can have closed it.
    const timer = setTimeout(() => s.destroy(), 5_000);
    let closedByRouter = false;
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => {
      closedByRouter = true;
      s.end();
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ reply: Buffer.concat(chunks), closedByRouter });
    });
    s.end(bytes);
  });
}

describe('http2 panel: a client FIN', () => {
  let backend: TestBackend;
  let r: TestRouter;

  beforeAll(async () => {
    backend = await startHttpBackend('web');
    r = await startTestRouter({
      panel: 'http2',
      limits: { idleTimeout: '60s', peekTimeout: '60s' },
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } } },
      },
    });
  });
  afterAll(async () => {
    await r.close();
    await backend.close();
  });

  it('after a complete request: the response is sent in full, then the connection closes', async () => {
    const request = headers(
      block([
        [':method', 'GET'],
        [':scheme', 'http'],
        [':authority', 'www.example.test'],
        [':path', '/fin'],
      ]),
    );
    const before = r.access.length;
    const { reply, closedByRouter } = await sendThenFin(r.port(), Buffer.concat([prelude(), request]));
    expect(closedByRouter).toBe(true);
    const frames = framesOf(reply).filter((f) => f.streamId === 1);
    // HEADERS with :status 200 (HPACK static index 8), then DATA ending the stream.
    expect(frames[0]?.type).toBe(FRAME.HEADERS);
    expect(frames[0]?.payload[0]).toBe(0x88);
    expect(frames.at(-1)?.type).toBe(FRAME.DATA);
    expect((frames.at(-1)?.flags ?? 0) & 0x1).toBe(1);
    const body = Buffer.concat(frames.filter((f) => f.type === FRAME.DATA).map((f) => f.payload)).toString();
    expect(JSON.parse(body)).toMatchObject({ backend: 'web', url: '/fin' });
    await r.waitForAccess(before + 1);
    expect(r.access.slice(before)).toEqual([expect.objectContaining({ status: 200, protocol: 'h2c' })]);
  });

  it.each([
    ['before the preface was complete', Buffer.from('PRI * HTTP/2.0\r\n'), undefined],
    ['after the preface and SETTINGS', prelude(), 'h2c'],
    ['before an HTTP/1.1 head', Buffer.alloc(0), undefined],
    ['after a SETTINGS ACK', Buffer.concat([prelude(), frame(FRAME.SETTINGS, 1, 0)]), 'h2c'],
  ])('%s: closed at once, one client_closed access line, no backend', async (_label, bytes, protocol) => {
    const before = r.access.length;
    const hits = backend.hits;
    const { closedByRouter } = await sendThenFin(r.port(), bytes);
    expect(closedByRouter).toBe(true);
    await r.waitForAccess(before + 1);
    const line = r.access[before]!;
    expect(line).toMatchObject({ result: 'client_closed', reason: 'client closed before the first request' });
    expect(line.protocol).toBe(protocol);
    expect(backend.hits).toBe(hits);
  });
});
