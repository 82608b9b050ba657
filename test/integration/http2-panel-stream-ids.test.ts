/**
 * Upstream stream-id exhaustion (issue 40 item 3): a session whose next stream id would pass
 * the limit takes no more streams, finishes its own and closes; the next stream gets a new
 * session. The real limit is 2^31−1 (2^30 requests); this file sets a small artificial one
 * through `SWITCHBOARD_TEST_H2_MAX_STREAM_ID` (panels/http2/session-group.ts reads it once at
 * load, so it is set before the router's modules load; worker threads inherit it).
 */
import type { ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../harness/router.ts';
import type { H2Backend } from './http2-helpers.ts';

/** Stream ids 1, 3, 5, 7: four streams per upstream session. */
process.env.SWITCHBOARD_TEST_H2_MAX_STREAM_ID = '7';
const { startTestRouter, tempDir } = await import('../harness/router.ts');
const { h2Request, startH2Backend } = await import('./http2-helpers.ts');
const { connect } = await import('node:http2');

const PANELS = [
  { label: 'http2', panel: 'http2' },
  { label: 'worker/http2', panel: { name: 'worker', threads: 1, engine: 'http2' } },
] as const;

const get = { ':method': 'GET', ':path': '/', ':authority': 'ids.test', ':scheme': 'http' };

describe.each(PANELS)('http2 panel: upstream stream ids run out ($label)', ({ panel }) => {
  let backend: H2Backend;
  let router: TestRouter;
  let client: ClientHttp2Session;

  beforeAll(async () => {
    backend = await startH2Backend('ids');
    router = await startTestRouter(
      { panel, addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${backend.address}], protocol: h2c }\n` }) },
    );
    client = connect(`http://127.0.0.1:${router.port()}`);
    client.on('error', () => {});
  });
  afterAll(async () => {
    client.destroy();
    await router.close();
    await backend.close();
  });

  it('ten requests one after another: all served, on a new session every four', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await h2Request(client, get)).status);
    expect(statuses).toEqual(Array(10).fill(200));
    expect(backend.sessions).toBeGreaterThanOrEqual(3);
  });

  it('ten requests at once: all served (reserved ids are opened before the session drains)', async () => {
    const before = backend.sessions;
    const replies = await Promise.all(Array.from({ length: 10 }, () => h2Request(client, get)));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(backend.sessions - before).toBeGreaterThanOrEqual(2);
  });
});
