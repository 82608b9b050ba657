/**
 * The http2 panel's response frames as a real client sees them (nghttp -v): a response that is
 * complete without trailers when its head is passed on (stream.ts opens it without
 * `waitForTrailers`) ends on DATA frames, an empty body on one empty DATA frame, and trailers
 * the backend sends after its body, unannounced, still arrive as a trailing HEADERS frame.
 */
import { execFile } from 'node:child_process';
import { connect, constants } from 'node:http2';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasTool } from '../fixtures/h2/capture.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { type H2Backend, startH2Backend } from './http2-helpers.ts';

const run = promisify(execFile);
const hasNghttp = hasTool('nghttp');

/** The frames nghttp received on stream 13 (its first request): `TYPE length flags`. */
async function framesOf(url: string): Promise<string[]> {
  const { stdout } = await run('nghttp', ['-nv', url], { timeout: 10_000 });
  const out: string[] = [];
  for (const m of stdout.matchAll(/recv (\w+) frame <length=(\d+), flags=0x([0-9a-f]+), stream_id=13>/g)) {
    out.push(`${m[1]} ${m[2]} ${m[3]}`);
  }
  return out;
}

describe.skipIf(!hasNghttp)('http2 panel: response frames', () => {
  let backend: H2Backend;
  let router: TestRouter;

  beforeAll(async () => {
    backend = await startH2Backend('frames', (stream, headers) => {
      const path = headers[':path'];
      if (path === '/reset') {
        // The head and a reset in the same turn: the panel still holds the head when it resets.
        stream.respond({ ':status': 200 });
        stream.close(constants.NGHTTP2_ENHANCE_YOUR_CALM);
        return;
      }
      if (path === '/trailers') {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-late': 'yes' }));
        stream.end('body');
        return;
      }
      stream.respond({ ':status': 200 });
      if (path === '/empty') stream.end();
      else stream.end('hello world\n');
    });
    router = await startTestRouter(
      { panel: 'http2', operator: 'round-robin', addressBook: { name: 'file', path: 'servers.yaml' } },
      {
        dir: await tempDir({
          'servers.yaml': `- { host: "*", backends: [${backend.address}], protocol: h2c }\n`,
        }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('a complete response without trailers ends on DATA frames, no trailing HEADERS', async () => {
    const frames = await framesOf(`http://127.0.0.1:${router.port()}/small`);
    expect(frames[0]).toMatch(/^HEADERS \d+ 04$/);
    const rest = frames.slice(1);
    expect(rest.every((f) => f.startsWith('DATA '))).toBe(true);
    expect(rest.reduce((n, f) => n + Number(f.split(' ')[1]), 0)).toBe(12);
    expect(rest.at(-1)).toMatch(/ 01$/);
  });

  it('an empty body ends on one empty DATA frame', async () => {
    const frames = await framesOf(`http://127.0.0.1:${router.port()}/empty`);
    expect(frames[0]).toMatch(/^HEADERS \d+ 04$/);
    expect(frames.slice(1)).toEqual(['DATA 0 01']);
  });

  it('unannounced trailers sent after the body still arrive', async () => {
    const { stdout } = await run('nghttp', ['-nv', `http://127.0.0.1:${router.port()}/trailers`], { timeout: 10_000 });
    expect(stdout).toContain('x-late: yes');
    const frames = await framesOf(`http://127.0.0.1:${router.port()}/trailers`);
    expect(frames.at(-1)).toMatch(/^HEADERS \d+ 05$/);
  });

  it('a reset that follows the head in the same turn reaches the client with its code', async () => {
    const session = connect(`http://127.0.0.1:${router.port()}`);
    try {
      const code = await new Promise<number>((resolve) => {
        const stream = session.request({ ':path': '/reset' });
        stream.on('error', () => {});
        stream.resume();
        stream.on('close', () => resolve(stream.rstCode ?? 0));
      });
      expect(code).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    } finally {
      session.close();
    }
  });
});
