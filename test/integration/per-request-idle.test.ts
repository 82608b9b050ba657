/**
 * `limits.idleTimeout` in per-request mode (one idle tick per connection, panels/net/
 * per-request-idle.ts): an idle keep-alive connection is closed, logged idle_timeout, and its
 * upstream with it; a body that keeps moving is not cut, however long it takes; an idle pooled
 * upstream link is closed while the client goes on with another backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type NamedBackend, noLeaks, openClient, startNamedBackend } from './per-request-helpers.ts';

const IDLE_MS = 400;

const count = (text: string, what: string) => text.split(what).length - 1;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-request idleTimeout', () => {
  let a: NamedBackend;
  let b: NamedBackend;
  let router: TestRouter;

  beforeAll(async () => {
    a = await startNamedBackend('a');
    b = await startNamedBackend('b');
    router = await startTestRouter(
      {
        routing: 'per-request',
        // Connection lines: the idle close is the connection's result.
        log: { accessMode: 'per-connection' },
        addressBook: { name: 'file', path: 's.yaml' },
        limits: { idleTimeout: `${IDLE_MS}ms`, drainTimeout: '1s' },
      },
      {
        dir: await tempDir({
          's.yaml': `- { host: a.test, backends: [${a.address}] }\n- { host: b.test, backends: [${b.address}] }\n`,
        }),
      },
    );
  });

  afterAll(async () => {
    await router?.close();
    await a?.close();
    await b?.close();
  });

  it('closes an idle keep-alive connection and its upstream, logged idle_timeout', async () => {
    const c = openClient(router.port());
    const before = router.access.length;
    c.socket.write('GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n');
    await eventually(() => c.received().includes('"backend":"a"'), 10_000, 'the response');
    expect(a.open()).toBe(1);
    await c.closed;
    await router.waitForAccess(before + 1);
    expect(router.access.at(-1)?.result).toBe('idle_timeout');
    await noLeaks(router, [a, b]);
  });

  it('does not cut a body that keeps moving for longer than idleTimeout', async () => {
    const c = openClient(router.port());
    const body = 'x'.repeat(12);
    c.socket.write(`POST /slow HTTP/1.1\r\nHost: a.test\r\nContent-Length: ${body.length}\r\n\r\n`);
    // One byte every IDLE_MS / 4: the whole body takes three idle timeouts.
    for (const ch of body) {
      await sleep(IDLE_MS / 4);
      c.socket.write(ch);
    }
    await eventually(() => c.received().includes('"body":12'), 10_000, 'the response to the slow body');
    expect(c.received().startsWith('HTTP/1.1 200')).toBe(true);
    c.socket.end();
    await c.closed;
    await noLeaks(router, [a, b]);
  });

  it('closes an idle pooled upstream while the client goes on with another backend', async () => {
    const c = openClient(router.port());
    c.socket.write('GET /first HTTP/1.1\r\nHost: a.test\r\n\r\n');
    await eventually(() => c.received().includes('"backend":"a"'), 10_000, 'the response from a');
    // b from now on, a request every IDLE_MS / 4: the connection never idles, a's link does.
    let sent = 0;
    const until = Date.now() + IDLE_MS * 3;
    while (Date.now() < until) {
      c.socket.write(`GET /next-${sent} HTTP/1.1\r\nHost: b.test\r\n\r\n`);
      sent++;
      await eventually(() => count(c.received(), '"backend":"b"') === sent, 10_000, `response ${sent} from b`);
      await sleep(IDLE_MS / 4);
    }
    await eventually(() => a.open() === 0, 10_000, "a's pooled link closed");
    expect(b.open()).toBe(1);
    expect(c.socket.destroyed).toBe(false);
    c.socket.end();
    await c.closed;
    await noLeaks(router, [a, b]);
  });
});
