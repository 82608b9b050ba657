/**
 * A client FIN while the backend connect is still in progress (issue 40 item 10): it used to be
 * lost in per-request routing, so both sockets waited for halfCloseTimeout (60 s) and the log
 * said `client_error` with no reason. Now the half-close is passed on once the link is up (the
 * backend reads its EOF and answers), and a connection ended by a timeout says why. The backend
 * is a real listener whose accept is delayed (test/harness/slow-accept.ts).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessRecord } from '../../src/base/log.ts';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type SlowAccept, startSlowAccept } from '../harness/slow-accept.ts';

/** Sends `bytes` and a FIN at once; resolves with what came back before the router closed. */
function sendAndEnd(port: number, bytes: string): { sent: Promise<void>; reply: Promise<string> } {
  const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  let got = '';
  s.on('data', (d: Buffer) => (got += d.toString('latin1')));
  s.on('error', () => {});
  const timer = setTimeout(() => s.destroy(), 20_000);
  const reply = new Promise<string>((resolve) =>
    s.once('close', () => {
      clearTimeout(timer);
      resolve(got);
    }),
  );
  const sent = new Promise<void>((resolve) => s.once('connect', () => s.end(bytes, () => resolve())));
  return { sent, reply };
}

describe.each([
  ['per-request', 'POST /up HTTP/1.1\r\nHost: slow.test\r\nContent-Length: 100\r\n\r\nhello'],
  ['per-connection', 'POST /up HTTP/1.1\r\nHost: slow.test\r\nContent-Length: 100\r\n\r\nhello'],
] as const)('net %s: the client FIN during a slow connect', (routing, request) => {
  let backend: SlowAccept;
  let router: TestRouter;
  const ends: AccessRecord[] = [];
  const onEnd = (m: unknown) => ends.push({ ...(m as { record: AccessRecord }).record });

  beforeAll(async () => {
    subscribe('switchboard:connection:end', onEnd);
    // The backend answers `timeout` if no FIN came within 8 s of its accept.
    backend = await startSlowAccept(8_000);
    router = await startTestRouter(
      {
        panel: 'net',
        routing,
        limits: { connectTimeout: '10s', halfCloseTimeout: '15s' },
        addressBook: { name: 'file', path: 'servers.yaml' },
      },
      { dir: await tempDir({ 'servers.yaml': `- { host: slow.test, backends: [${backend.address}] }` }) },
    );
  });
  afterAll(async () => {
    unsubscribe('switchboard:connection:end', onEnd);
    await router.close();
    await backend.close();
  });

  it('reaches the backend once connected: it reads the EOF and answers', async () => {
    const { sent, reply } = sendAndEnd(router.port(), request);
    await sent;
    // The router is connecting now (the SYN was dropped); let the backend accept.
    await new Promise((r) => setTimeout(r, 200));
    backend.open();
    const got = await reply;
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(got).toMatch(/\r\n\r\neof \d+$/);
    await eventually(() => ends.length > 0, 10_000, 'the connection line');
    expect(ends.at(-1)?.result).not.toBe('client_error');
  }, 30_000);
});

describe.each(['per-request', 'per-connection'] as const)(
  'net %s: a connection ended by halfCloseTimeout',
  (routing) => {
    let backend: TcpBackend;
    let router: TestRouter;
    const ends: AccessRecord[] = [];
    const onEnd = (m: unknown) => ends.push({ ...(m as { record: AccessRecord }).record });

    beforeAll(async () => {
      subscribe('switchboard:connection:end', onEnd);
      backend = await startTcpBackend('silent'); // reads, never answers, never closes
      router = await startTestRouter(
        {
          panel: 'net',
          routing,
          limits: { halfCloseTimeout: '1s' },
          addressBook: { name: 'file', path: 'servers.yaml' },
        },
        { dir: await tempDir({ 'servers.yaml': `- { host: slow.test, backends: [${backend.address}] }` }) },
      );
    });
    afterAll(async () => {
      unsubscribe('switchboard:connection:end', onEnd);
      await router.close();
      await backend.close();
    });

    it('logs client_error with the reason', async () => {
      const { sent, reply } = sendAndEnd(
        router.port(),
        'POST /up HTTP/1.1\r\nHost: slow.test\r\nContent-Length: 100\r\n\r\nhello',
      );
      await sent;
      await reply;
      await eventually(() => ends.length > 0, 10_000, 'the connection line');
      expect(ends.at(-1)).toMatchObject({ result: 'client_error', reason: 'client: half-close timeout' });
    });
  },
);
