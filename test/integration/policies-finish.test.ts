/**
 * The `finish` observe point (issue 42 item 1, BFE HandleRequestFinish / HandleFinish): a
 * custom policy loaded by module path (`use: ./observer.ts`) is told of every end — each
 * request of a per-request connection (ended `request`), each HTTP/2 stream (`stream`), each
 * connection (`connection`) — with the connection facts and, when known, the request, product
 * and cluster. It appends a line per end to a file beside the config (worker threads run their
 * own copy of it, so a file is what every panel can write). A set without an observing policy
 * builds nothing (`observes` is false).
 */
import { readFileSync } from 'node:fs';
import { connect as h2connect } from 'node:http2';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { h2Request } from './http2-helpers.ts';

/** What the observer records of one end. */
interface Seen {
  readonly ended: string;
  readonly clientIp: string;
  readonly path: string | undefined;
  readonly product: string | undefined;
  readonly cluster: string | undefined;
}

const LOG = 'finishes.ndjson';

/** A custom policy with a `connection` point that lets everything through, and `finish`. */
const OBSERVER = `
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export default {
  name: 'observer',
  points: ['connection'],
  create(_options, context) {
    const file = join(context.configDir, ${JSON.stringify(LOG)});
    return {
      connection() { return undefined; },
      finish(ctx) {
        const line = {
          ended: ctx.ended,
          clientIp: ctx.connection.clientIp,
          path: ctx.request?.path,
          product: ctx.product,
          cluster: ctx.cluster,
        };
        appendFileSync(file, JSON.stringify(line) + '\\n');
      },
    };
  },
};
`;

const WILDCARD = [{ name: 'web', address: '0.0.0.0:0' }];
const ADMIN = {
  name: 'admin',
  use: 'block',
  when: 'req_path_prefix_in("/admin", false)',
  action: { respond: { status: 403, body: 'no\n' } },
};

/** Writes `text` on one connection; resolves with what was read once the router closed it. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
    });
    s.on('error', () => {});
    s.once('close', () => resolve(data));
    s.write(text);
  });
}

describe('policies: the finish point', () => {
  let backend: TestBackend | undefined;
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    await backend?.close();
    router = undefined;
    backend = undefined;
  });

  async function start(extra: Record<string, unknown>, policies: unknown[] = [{ name: 'obs', use: './observer.ts' }]) {
    backend = await startHttpBackend('a');
    const dir = await tempDir({
      'servers.yaml': `- { host: "*", backends: [${backend.address}] }\n`,
      'observer.ts': OBSERVER,
    });
    router = await startTestRouter(
      { listeners: WILDCARD, addressBook: { name: 'file', path: 'servers.yaml' }, policies, ...extra },
      { dir },
    );
    return router;
  }

  /** The ends the observer wrote so far. */
  function seen(): Seen[] {
    let text = '';
    try {
      text = readFileSync(join(router?.dir ?? '', LOG), 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Seen);
  }
  const count = (ended: string): number => seen().filter((s) => s.ended === ended).length;

  it('net per-request: each request ends once with its request, product and cluster, then the connection', async () => {
    const r = await start({ routing: 'per-request' }, [{ name: 'obs', use: './observer.ts' }, ADMIN]);
    expect(r.router.runtime.engine.policies.observes).toBe(true);
    const reply = await exchange(
      r.port(),
      'GET /one HTTP/1.1\r\nHost: a.test\r\n\r\nGET /admin HTTP/1.1\r\nHost: a.test\r\n\r\n' +
        'GET /two HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
    );
    expect(reply.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 403', 'HTTP/1.1 200']);
    await eventually(() => count('connection') === 1, 10_000, 'the connection end');
    const requests = seen().filter((s) => s.ended === 'request');
    expect(requests.map((s) => s.path)).toEqual(['/one', '/admin', '/two']);
    await eventually(() => r.access.length >= 1);
    const routed = r.access.find((a) => a.product !== undefined);
    expect(routed?.product).toBeDefined();
    // Routed requests name the book's product and cluster; the one refused before the book does not.
    expect(requests[0]).toMatchObject({ clientIp: '127.0.0.1', product: routed?.product, cluster: routed?.cluster });
    expect([requests[1]?.product, requests[1]?.cluster]).toEqual([undefined, undefined]);
    const connection = seen().find((s) => s.ended === 'connection');
    expect(connection?.clientIp).toBe('127.0.0.1');
    expect(connection?.path).toBeUndefined();
    // Each end is told once: the counts do not grow afterwards.
    expect(seen()).toHaveLength(4);
  });

  it('net per-connection: the connection ends once (no per-request ends)', async () => {
    const r = await start({ routing: 'per-connection' });
    const reply = await exchange(r.port(), 'GET /x HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    await eventually(() => count('connection') === 1, 10_000, 'the connection end');
    expect(count('request')).toBe(0);
    expect(count('stream')).toBe(0);
  });

  it('http2: each stream ends with its request, then the session’s connection', async () => {
    const r = await start({ panel: 'http2' });
    const session = h2connect(`http://127.0.0.1:${r.port()}`);
    session.on('error', () => {});
    const get = (path: string) => ({ ':method': 'GET', ':path': path, ':authority': 'a.test' });
    expect((await h2Request(session, get('/s1'))).status).toBe(200);
    expect((await h2Request(session, get('/s2'))).status).toBe(200);
    await eventually(() => count('stream') === 2, 10_000, 'two stream ends');
    expect(count('connection')).toBe(0);
    session.close();
    await eventually(() => count('connection') === 1, 10_000, 'the connection end');
    const streams = seen().filter((s) => s.ended === 'stream');
    expect(streams.map((s) => s.path)).toEqual(['/s1', '/s2']);
    expect(streams[0]?.product).toBeDefined();
    expect(streams[0]?.cluster).toBeDefined();
  });

  it('worker (net, 2 threads): the threads tell their own copy of the policy, the same ends', async () => {
    const r = await start({ panel: { name: 'worker', threads: 2, engine: 'net' } });
    const reply = await exchange(
      r.port(),
      'GET /w1 HTTP/1.1\r\nHost: a.test\r\n\r\nGET /w2 HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
    );
    expect(reply.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    await eventually(() => count('connection') === 1, 10_000, 'the connection end');
    expect(
      seen()
        .filter((s) => s.ended === 'request')
        .map((s) => s.path),
    ).toEqual(['/w1', '/w2']);
  });

  it('a set with no observing policy does not observe (nothing is built at an end)', async () => {
    const r = await start({ routing: 'per-request' }, [ADMIN]);
    expect(r.router.runtime.engine.policies.observes).toBe(false);
    const reply = await exchange(r.port(), 'GET /x HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    expect(seen()).toHaveLength(0);
  });
});
