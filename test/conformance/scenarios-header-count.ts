/**
 * Panel conformance scenarios for `limits.maxHeaderCount` (issue 40 item 11), part of the table
 * of panel.ts: a request with more header fields than the limit is answered 431
 * `header_too_large` and never reaches a backend, on every panel and routing mode (net
 * per-request and per-connection, http2 over HTTP/1.1 and h2c, worker threads of either
 * engine); one at the limit goes through. 3,000 fields fit in 16 KiB: the byte limit alone lets
 * them pass (Node backends keep 2,000 of them, HAProxy refuses more than 101).
 */
import { connect as h2Connect } from 'node:http2';
import { expect } from 'vitest';
import { startTcpBackend, type TcpBackend } from '../harness/backend.ts';
import { rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter, type TestRouter } from '../harness/router.ts';
import { type PanelUnderTest, panelKeys, runsHttp2, type Scenario } from './panel-under-test.ts';

const HOST = 'www.example.test';

/** A head with Host and `extra` more field lines (`Host` counts as one field). */
function head(path: string, extra: number, line = (i: number) => `X-F${i}: ${i}`): string {
  let fields = '';
  for (let i = 0; i < extra; i++) fields += `${line(i)}\r\n`;
  return `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n${fields}Connection: close\r\n\r\n`;
}

/** A raw backend answering every connection's first bytes with `200 ok`, counting them. */
function okBackend(): Promise<TcpBackend> {
  return startTcpBackend('be', (socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
  });
}

function configFor(
  p: PanelUnderTest,
  be: { address: string },
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...panelKeys(p),
    addressBook: {
      name: 'bfe',
      products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
      clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address: be.address }] } } } },
    },
    ...more,
  };
}

async function withRouter(config: Record<string, unknown>, body: (r: TestRouter) => Promise<void>): Promise<void> {
  const r = await startTestRouter(config);
  try {
    await body(r);
  } finally {
    await r.close();
  }
}

/** One h2c request with `fields` regular fields: its status, or how it failed. */
function h2cStatus(port: number, fields: number): Promise<number | string> {
  return new Promise((resolve) => {
    const session = h2Connect(`http://127.0.0.1:${port}`);
    const timer = setTimeout(() => done('timeout'), 4_000);
    const done = (v: number | string) => {
      clearTimeout(timer);
      session.destroy();
      resolve(v);
    };
    session.on('error', (e) => done(e.message));
    session.on('close', () => done('session closed'));
    const headers: Record<string, string> = { ':path': '/', ':authority': HOST };
    for (let i = 0; i < fields; i++) headers[`x-f${i}`] = String(i);
    const stream = session.request(headers, { endStream: true });
    stream.on('response', (h) => done(Number(h[':status'])));
    stream.on('error', (e) => done(e.message));
    stream.on('close', () => done(`stream closed (${stream.rstCode})`));
  });
}

/** Over the default limit: 431 and nothing forwarded; at the limit: forwarded. */
async function overAndAt(r: TestRouter, be: TcpBackend): Promise<void> {
  const hits = be.hits;
  // Host + 99 + Connection = 101 fields: one over the default of 100.
  const over = await rawRequest(r.port(), head('/over', 99));
  expect(statusOf(over)).toBe(431);
  expect(over.toString('latin1')).toMatch(/\r\nX-Switchboard-Error: header_too_large\r\n/i);
  // 3,000 fields in under 16 KiB: within maxHeaderBytes, over the count.
  const many = head('/many', 3_000, () => 'a:1');
  expect(many.length).toBeLessThan(16_384);
  expect(statusOf(await rawRequest(r.port(), many))).toBe(431);
  expect(be.hits).toBe(hits);
  // At the limit (100 fields) the request goes through.
  expect(statusOf(await rawRequest(r.port(), head('/at', 98)))).toBe(200);
}

export const headerCountScenarios: readonly Scenario[] = [
  {
    name: 'maxHeaderCount: an HTTP/1.1 head with more fields is answered 431, never forwarded',
    spec: 'README limits.maxHeaderCount (more fields → 431); issue 40 item 11',
    async run(p) {
      const be = await okBackend();
      try {
        await withRouter(configFor(p, be), (r) => overAndAt(r, be));
      } finally {
        await be.close();
      }
    },
  },
  {
    name: 'maxHeaderCount: per-connection routing answers 431 too, never forwarded',
    spec: 'README limits.maxHeaderCount; issue 40 item 11',
    refusal: (p) =>
      runsHttp2(p)
        ? {
            config: configFor(p, { address: '127.0.0.1:9' }, { routing: 'per-connection' }),
            error: /routing: per-connection is not supported by panel/,
          }
        : undefined,
    async run(p) {
      const be = await okBackend();
      try {
        await withRouter(configFor(p, be, { routing: 'per-connection' }), (r) => overAndAt(r, be));
      } finally {
        await be.close();
      }
    },
  },
  {
    name: 'maxHeaderCount: a configured limit (10) passes 10 fields and answers 11 with 431',
    spec: 'README limits.maxHeaderCount; issue 40 item 11',
    async run(p) {
      const be = await okBackend();
      try {
        await withRouter(configFor(p, be, { limits: { maxHeaderCount: 10 } }), async (r) => {
          expect(statusOf(await rawRequest(r.port(), head('/eleven', 9)))).toBe(431);
          expect(be.hits).toBe(0);
          expect(statusOf(await rawRequest(r.port(), head('/ten', 8)))).toBe(200);
        });
      } finally {
        await be.close();
      }
    },
  },
  {
    name: 'maxHeaderCount: a limit above 128 (node:http2 own list cap) holds exactly on HTTP/2 streams too',
    spec: 'README limits.maxHeaderCount; issue 40 item 11',
    async run(p) {
      const be = await okBackend();
      try {
        await withRouter(configFor(p, be, { limits: { maxHeaderCount: 300 } }), async (r) => {
          if (runsHttp2(p)) {
            // 250 fields: within the configured 300, past node's default of 128 pairs.
            expect(await h2cStatus(r.port(), 250)).toBe(200);
            expect(await h2cStatus(r.port(), 310)).toBe(431);
          } else {
            expect(statusOf(await rawRequest(r.port(), head('/at', 250)))).toBe(200);
            expect(statusOf(await rawRequest(r.port(), head('/over', 310)))).toBe(431);
          }
          expect(be.hits).toBe(1);
        });
      } finally {
        await be.close();
      }
    },
  },
  {
    name: 'maxHeaderCount: an h2c request with more fields is refused (431, or a GOAWAY at the peek of the net panel), never forwarded',
    spec: 'README limits.maxHeaderCount (HTTP/2: the stream answered 431); issue 40 item 11',
    async run(p) {
      const be = await okBackend();
      try {
        await withRouter(configFor(p, be), async (r) => {
          // 110 regular fields: over the default of 100, under node's own 128 header pairs.
          const status = await h2cStatus(r.port(), 110);
          // The net panel's h2c peek refuses with a GOAWAY (ENHANCE_YOUR_CALM); a stream is answered 431.
          if (runsHttp2(p) || typeof status === 'number') expect(status).toBe(431);
          expect(be.hits).toBe(0);
        });
      } finally {
        await be.close();
      }
    },
  },
];
