/**
 * The linger after the router's own answer is bounded in bytes (issue 40 item 5): a refused
 * client that keeps sending used to be read at full speed for the whole 2 s linger (1–3 GB per
 * connection, RSS to ~220 MB; HAProxy closes after ~36 KB). Now the linger reads at most
 * LINGER_BYTES (64 KiB) and closes. Checked on the net panel in both routing modes: the bytes
 * the router read (the access line's bytesIn, its socket's bytesRead) and its RSS.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessRecord } from '../../src/base/log.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const MIB = 1024 * 1024;
/** src/data-path/answer.ts LINGER_BYTES. */
const LINGER_BYTES = 64 * 1024;

/**
 * Sends `head`, then writes 64 KiB chunks as fast as the socket takes them until the router
 * closes the connection (or 5 s pass). Resolves with the status line it got.
 */
function refusedFlood(port: number, head: string): Promise<string> {
  return new Promise((resolve) => {
    // Half-open: the router's FIN does not stop it (a client that ignores the answer).
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let got = '';
    let open = true;
    const timer = setTimeout(() => s.destroy(), 5_000);
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.on('error', () => {});
    s.on('close', () => {
      open = false;
      clearTimeout(timer);
      resolve(got.split('\r\n')[0] ?? '');
    });
    const pump = () => {
      while (open && !s.destroyed && s.write(chunk));
    };
    s.on('drain', pump);
    s.on('connect', () => {
      s.write(head);
      pump();
    });
  });
}

describe.each(['per-request', 'per-connection'] as const)('net %s: the linger after an answer is capped', (routing) => {
  let router: TestRouter;
  // Every connection's end (its record's bytesIn is the client socket's bytesRead), whichever
  // access lines the config writes.
  const ends: AccessRecord[] = [];
  const onEnd = (m: unknown) => ends.push({ ...(m as { record: AccessRecord }).record });

  beforeAll(async () => {
    subscribe('switchboard:connection:end', onEnd);
    router = await startTestRouter(
      { panel: 'net', routing, addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': '- { host: known.test, backends: ["127.0.0.1:9"] }' }) },
    );
  });
  afterAll(async () => {
    unsubscribe('switchboard:connection:end', onEnd);
    await router.close();
  });

  it.each([
    ['400 bad_request (two Host lines)', 'GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n', '400'],
    ['404 no_route', 'POST / HTTP/1.1\r\nHost: nowhere.test\r\nContent-Length: 5\r\n\r\nhello', '404'],
  ])('%s: the client keeps sending; at most the cap is read, RSS stays flat', async (_name, head, status) => {
    const rss = process.memoryUsage().rss;
    const before = ends.length;
    for (let i = 0; i < 3; i++) expect(await refusedFlood(router.port(), head)).toContain(status);
    await eventually(() => ends.length >= before + 3, 10_000, 'three connection ends');
    for (const line of ends.slice(before)) {
      // The head, the cap and at most one read (64 KiB) past it.
      expect(line.bytesIn).toBeLessThan(LINGER_BYTES + 4 * 64 * 1024);
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(100 * MIB);
  });
});
