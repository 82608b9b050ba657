/**
 * Graceful shutdown of per-request connections (issue 7 §4): an idle keep-alive connection is
 * closed at once, one with a request in flight gets its response and is closed after it — well
 * before drainTimeout, which is set long so that only the drain can explain the closes.
 */
import { describe, expect, it } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';
import { openClient } from './per-request-helpers.ts';

describe('per-request connections during a graceful shutdown', () => {
  it('closes idle keep-alive connections now and busy ones after their current response', async () => {
    let release: (() => void) | undefined;
    const backend = await startHttpBackend('b', (req, res) => {
      const answer = () => res.writeHead(200, { 'content-length': 2 }).end('ok');
      if (req.url === '/slow') release = answer;
      else answer();
    });
    const router = await startTestRouter(
      { routing: 'per-request', addressBook: { name: 'file', path: 's.yaml' }, limits: { drainTimeout: '60s' } },
      { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [${backend.address}] }\n` }) },
    );
    const idle = openClient(router.port());
    idle.socket.write('GET /fast HTTP/1.1\r\nHost: a.test\r\n\r\n');
    await eventually(() => idle.received().includes('\r\n\r\nok'), 10_000, 'the first response');
    const busy = openClient(router.port());
    busy.socket.write('GET /slow HTTP/1.1\r\nHost: a.test\r\n\r\n');
    await eventually(() => release !== undefined, 10_000, 'the slow request at the backend');

    const started = Date.now();
    const closing = router.close();
    await idle.closed;
    expect(busy.socket.destroyed).toBe(false);
    release!();
    await busy.closed;
    expect(busy.received()).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nok$/);
    await closing;
    expect(Date.now() - started).toBeLessThan(30_000);
    await backend.close();
  });
});
