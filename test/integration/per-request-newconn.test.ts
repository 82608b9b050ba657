/**
 * The set-up and teardown of a per-request connection that carries one request with
 * `Connection: close` (issue 18, new connection per request). Counted, never timed: the
 * exchange is answered and logged as before, and the router calls `end()` on no socket that
 * has already finished or been destroyed (node builds and drops an ERR_STREAM_ALREADY_FINISHED
 * with its stack trace for each such call).
 */
import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type NamedBackend, noLeaks, startNamedBackend } from './per-request-helpers.ts';

let backend: NamedBackend;
let router: TestRouter;

beforeAll(async () => {
  backend = await startNamedBackend('b1');
  const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
  router = await startTestRouter(
    { routing: 'per-request', addressBook: { name: 'file', path: 'servers.yaml' }, log: { access: 'connection' } },
    { dir },
  );
});
afterAll(async () => {
  await router.close();
  await backend.close();
});

describe('per-request, one request per connection (Connection: close)', () => {
  it('answers, logs one ok line per connection, and ends no finished socket again', async () => {
    const end = Socket.prototype.end;
    let late = 0;
    Socket.prototype.end = function (this: Socket, ...args: unknown[]) {
      if (this.writableFinished || this.destroyed) late++;
      return (end as (...a: unknown[]) => Socket).apply(this, args);
    } as typeof end;
    try {
      const before = router.access.length;
      for (let i = 0; i < 5; i++) {
        const reply = await rawRequest(router.port(), 'GET /x HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n');
        expect(statusOf(reply)).toBe(200);
        expect(reply.toString('latin1')).toContain('"backend":"b1"');
      }
      const records = (await router.waitForAccess(before + 5)).slice(before);
      expect(records.map((r) => r.result)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(records.every((r) => r.backend === backend.address && r.status === 200)).toBe(true);
      // Every upstream socket has closed, so each backend FIN (after the router's own end of
      // that socket) has been read.
      await noLeaks(router, [backend]);
      expect(late).toBe(0);
    } finally {
      Socket.prototype.end = end;
    }
  });
});
