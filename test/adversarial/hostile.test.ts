/**
 * Slow and hostile clients (issue 13 §3), against routing: per-connection (one decision for the
 * whole connection, so the first head is all that stands between a smuggler and a backend). A
 * recording backend sits behind every route and must receive nothing unless a case says so;
 * every connection ends with one access line carrying a result code, and nothing leaks.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { NothingLost, type RecordingBackend, startRecordingBackend } from '../harness/nothing-lost.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { expectNoLeaks, resources } from './leaks.ts';

const H = 'Host: ok.test\r\n';

// reference/peers-reliability.md §3, replayed as the FIRST request of a per-connection route.
const smuggling: [string, string][] = [
  ['row 1 CL.TE', `POST / HTTP/1.1\r\n${H}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG`],
  [
    'row 2 TE.CL',
    `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n`,
  ],
  ['row 3 TE with space before colon', `POST / HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n`],
  ['row 3 TE xchunked', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n`],
  ['row 3 TE chunked, identity', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n`],
  ['row 3 TE twice', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n`],
  ['row 3 TE \\x0b before the value', `POST / HTTP/1.1\r\n${H}Transfer-Encoding:\x0bchunked\r\n\r\n`],
  ['row 3 TE in HTTP/1.0', `POST / HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
  ['row 4 two Content-Length', `POST / HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`],
  ['row 4 Content-Length +5', `POST / HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\nhello`],
  ['row 4 25-digit Content-Length', `POST / HTTP/1.1\r\n${H}Content-Length: ${'9'.repeat(25)}\r\n\r\n`],
  ['row 5 obs-fold', `GET / HTTP/1.1\r\nHost: ok.test\r\n evil.test\r\n\r\n`],
  ['row 6 bare LF', `GET / HTTP/1.1\n${H}\n`],
  ['row 6 bare CR in a value', `GET / HTTP/1.1\r\n${H}X: a\rb\r\n\r\n`],
  ['row 7 NUL in a name', `GET / HTTP/1.1\r\n${H}Ho\x00st: a\r\n\r\n`],
  ['row 8 absolute-form ≠ Host', `GET http://internal.test/ HTTP/1.1\r\n${H}\r\n`],
  ['row 9 two Host', `GET / HTTP/1.1\r\n${H}Host: internal.test\r\n\r\n`],
  ['row 9 Host with userinfo', 'GET / HTTP/1.1\r\nHost: user@ok.test\r\n\r\n'],
  ['row 11 two spaces', `GET  / HTTP/1.1\r\n${H}\r\n`],
  ['row 11 HTTP/1.32', `GET / HTTP/1.32\r\n${H}\r\n`],
  ['row 15 HTTP/1.0 GET with a body', `GET / HTTP/1.0\r\n${H}Content-Length: 5\r\n\r\nhello`],
];

describe('hostile clients (per-connection routing)', () => {
  let backend: RecordingBackend;
  let router: TestRouter;
  let proxyRouter: TestRouter;
  let baseline: Record<string, number>;

  beforeAll(async () => {
    backend = await startRecordingBackend((c) => c.socket.on('data', () => {}));
    const dir = await tempDir({ 's.yaml': `- { host: "*", backends: [${backend.address}] }\n` });
    const base = { routing: 'per-connection', operator: 'round-robin', addressBook: { name: 'file', path: 's.yaml' } };
    router = await startTestRouter(
      { ...base, limits: { peekTimeout: '1500ms', idleTimeout: '700ms', maxHeaderBytes: 16384 } },
      { dir },
    );
    proxyRouter = await startTestRouter(
      {
        ...base,
        listeners: [{ name: 'pp', address: '127.0.0.1:0', proxyProtocol: 'any', trustedSources: ['127.0.0.1/32'] }],
        limits: { peekTimeout: '1500ms' },
      },
      { dir },
    );
  });
  afterAll(async () => {
    await router.close();
    await proxyRouter.close();
    await backend.close();
  });
  beforeEach(() => {
    baseline = resources();
  });

  /** Sends `bytes`, expects `status` (0 = closed without an answer) and one `result` line. */
  async function refused(r: TestRouter, bytes: string | Buffer, status: number, result: string, timeoutMs = 5000) {
    const before = r.access.length;
    const hitsBefore = backend.conns.length;
    const res = await rawRequest(r.port(), bytes, { timeoutMs });
    expect(statusOf(res)).toBe(status);
    if (status > 0) expect(headerOf(res, 'X-Switchboard-Error')).toBe(result);
    await r.waitForAccess(before + 1);
    expect(r.access.slice(before).map((a) => a.result)).toEqual([result]);
    expect(backend.conns.length).toBe(hitsBefore);
    await expectNoLeaks(r, baseline, 15_000, 2);
  }

  it.each(smuggling)('%s → 400, nothing reaches the backend', async (_row, bytes) => {
    await refused(router, bytes, 400, 'bad_request');
  });

  it('slowloris on the head (1 byte / 200 ms) → 408 at the peek deadline (§4 "Slowloris")', async () => {
    const before = router.access.length;
    const res = await rawRequest(router.port(), `GET / HTTP/1.1\r\n${H}X-Slow: ${'s'.repeat(40)}\r\n\r\n`, {
      chunkSize: 1,
      delayMs: 200,
      timeoutMs: 20_000,
    });
    expect(statusOf(res)).toBe(408);
    await router.waitForAccess(before + 1);
    expect(router.access.at(-1)?.result).toBe('peek_timeout');
    await expectNoLeaks(router, baseline, 15_000, 2);
  });

  it('10,000 headers → 431 (§4 "Maximum header size")', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => `X-${i}: v\r\n`).join('');
    await refused(router, `GET / HTTP/1.1\r\n${H}${many}\r\n`, 431, 'header_too_large');
  });

  it('one 100 KB header line → 431', async () => {
    await refused(router, `GET / HTTP/1.1\r\n${H}X-Big: ${'b'.repeat(100_000)}\r\n\r\n`, 431, 'header_too_large');
  });

  it('a header flood that never ends (4 MiB of lines) → 431 once the cap is passed', async () => {
    const flood = Buffer.from(`GET / HTTP/1.1\r\n${H}${'X-Flood: f\r\n'.repeat(350_000)}`, 'latin1');
    await refused(router, flood, 431, 'header_too_large', 10_000);
  });

  it('a slow body upload stops moving → closed by the idle timeout, logged, bytes accounted', async () => {
    const ledger = new NothingLost([backend]);
    const c = await ledger.open(router.port());
    const before = router.access.length;
    c.write(`POST /nl-${c.id}-nl HTTP/1.1\r\n${H}Content-Length: 1000\r\n\r\n0123456789`);
    await c.closed;
    await router.waitForAccess(before + 1);
    expect(router.access.at(-1)?.result).toBe('idle_timeout');
    expect(ledger.reconcile(router.access)).toEqual([]);
    await expectNoLeaks(router, baseline, 15_000, 2);
  });

  const sig = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
  const absurd: [string, Buffer][] = [
    [
      'v2 length 65535 with 16 bytes behind it',
      Buffer.concat([sig, Buffer.from([0x21, 0x11, 0xff, 0xff]), Buffer.alloc(16)]),
    ],
    [
      'v2 length shorter than its IPv4 addresses',
      Buffer.concat([sig, Buffer.from([0x21, 0x11, 0x00, 0x04]), Buffer.alloc(4)]),
    ],
    ['v1 line of 200 bytes without CRLF', Buffer.from(`PROXY TCP4 ${'1'.repeat(190)}`, 'latin1')],
    ['v1 with a port of 20 digits', Buffer.from(`PROXY TCP4 1.2.3.4 5.6.7.8 ${'9'.repeat(20)} 80\r\n`, 'latin1')],
  ];
  it.each(absurd)(
    'absurd PROXY header: %s → closed, proxy_rejected (proxy-protocol.txt §2.1/§2.2)',
    async (_n, bytes) => {
      await refused(
        proxyRouter,
        Buffer.concat([bytes, Buffer.from(`GET / HTTP/1.1\r\n${H}\r\n`)]),
        0,
        'proxy_rejected',
      );
    },
  );
});
