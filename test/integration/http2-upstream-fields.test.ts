/**
 * Client fields that node refuses to put on an HTTP/2 stream (issue 17 item 2, "every place a
 * peer-controlled value flows into an encoder"): the http2 panel forwarding an HTTP/1.1 request
 * to an h2c cluster. Before, `session.request` threw, the throw was taken for a failed connect:
 * the healthy session was dropped, every backend was tried and the client got 502. Now the
 * hop-by-hop ones are dropped (RFC 9113 §8.2.2; `HTTP2-Settings`, RFC 7540 §3.2.1), `TE` goes as
 * `trailers`, repeated single-value fields pass as sent, and the request reaches the backend.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';
import { echoWho, type H2Backend, startH2Backend } from './http2-helpers.ts';

const head = (fields: string) => `GET /f HTTP/1.1\r\nHost: www.example.test\r\n${fields}Connection: close\r\n\r\n`;

describe('http2 panel: client fields towards an h2c backend', () => {
  let backend: H2Backend;
  let router: TestRouter;
  const seen: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    backend = await startH2Backend('h2', (stream, headers, name) => {
      seen.push(headers);
      echoWho(stream, headers, name);
    });
    router = await startTestRouter({
      panel: 'http2',
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: {
            protocol: 'h2c',
            retries: 2,
            subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await router?.close();
    await backend?.close();
  });

  it.each([
    ['RFC 9113 §8.2.2: TE other than lower-case "trailers"', 'TE: Trailers\r\n', { te: 'trailers' }],
    ['RFC 9113 §8.2.2: TE sent twice', 'TE: trailers\r\nTE: trailers\r\n', { te: 'trailers' }],
    ['RFC 7540 §3.2.1: HTTP2-Settings is connection-specific', 'HTTP2-Settings: AAMAAABkAAQAAP__\r\n', {}],
    ['RFC 9110 §5.3: a repeated single-value field, as sent', 'User-Agent: a\r\nUser-Agent: b\r\n', {}],
  ])('%s: forwarded on the same session, 200', async (_name, fields, want) => {
    const sessions = backend.sessions;
    const lines = router.access.length;
    const res = await rawRequest(router.port(), head(fields), { timeoutMs: 10_000 });
    expect(statusOf(res)).toBe(200);
    const got = seen.at(-1)!;
    expect(got).toMatchObject({ ':path': '/f', ...want });
    expect(got['http2-settings']).toBeUndefined();
    // Not mistaken for a failed connect: one attempt, and the session was kept.
    await router.waitForAccess(lines + 1);
    expect(router.access[lines]).toMatchObject({ result: 'ok', attempts: 1 });
    if (sessions > 0) expect(backend.sessions).toBe(sessions);
  });
});
