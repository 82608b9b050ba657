/**
 * Last known good (issue 17 item 12) on the etcd book against a real etcd (Debian's binary on
 * free loopback ports) and the real router: a router restarted while etcd is down serves the
 * cache a previous run wrote (requests routed, the log line says stale, with its age); etcd back:
 * live data replaces it; no cache, or a corrupt one: the start fails with a clear message.
 */

import { readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routingTableSchema } from '../../address-books/bfe/routing-table.ts';
import type { EtcdAddressBook } from '../../address-books/etcd/book.ts';
import { etcdImportTable } from '../../address-books/etcd/store.ts';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, freePort, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { eventually, startTestRouter, tempDir } from '../harness/router.ts';

const HAVE_ETCD = etcdBinary() !== undefined;
if (!HAVE_ETCD) {
  describe.skip('last known good (etcd): etcd is not installed (apt-get install etcd-server etcd-client)', () => {
    it('skipped', () => undefined);
  });
}

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

function capture() {
  const lines: Line[] = [];
  const logger = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l)) });
  return { lines, logger };
}

function get(port: number, host: string): Promise<{ status: number; backend: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', path: '/', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, backend: res.headers['x-backend'] as string }));
    });
    req.on('error', reject);
    req.end();
  });
}

function config(endpoint: string, prefix: string) {
  return {
    operator: 'round-robin',
    addressBook: {
      name: 'etcd',
      endpoints: endpoint,
      prefix,
      debounce: '20ms',
      dialTimeout: '500ms',
      reconnect: { initial: '100ms', max: '500ms' },
      cache: 'etcd.last-good.json',
    },
  };
}

async function startFails(dir: string, cfg: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const { logger } = capture();
  return startTestRouter(cfg, { dir, runtime: { logger } }).then(
    async (r) => {
      await r.close();
      throw new Error('the router started');
    },
    (e: unknown) => e as { code: string; message: string },
  );
}

describe.skipIf(!HAVE_ETCD)('last known good: etcd book', () => {
  let etcd: TestEtcd;
  let a: TestBackend;
  let b: TestBackend;
  let dir: string;
  const prefix = '/lkg/';

  beforeAll(async () => {
    [etcd, a, b, dir] = await Promise.all([startEtcd(), startHttpBackend('a'), startHttpBackend('b'), tempDir()]);
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      const table = routingTableSchema.parse({
        products: { shop: { hosts: ['shop.test'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
        clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: a.address }] } } } },
      });
      await etcdImportTable(client, table, prefix);
    } finally {
      client.close();
    }
  }, 30_000);
  afterAll(async () => {
    await Promise.all([etcd?.close(), a?.close(), b?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('a router restarted while etcd is down serves the cache of the previous run, stale; etcd back: live data', async () => {
    // A first run with etcd up writes the cache next to the config.
    const first = await startTestRouter(config(etcd.endpoint, prefix), { dir, runtime: { logger: capture().logger } });
    expect(await get(first.port(), 'shop.test')).toEqual({ status: 200, backend: 'a' });
    await first.close();
    expect(JSON.parse(await readFile(join(dir, 'etcd.last-good.json'), 'utf8'))).toMatchObject({
      switchboard: 'last-good',
      book: 'etcd',
      source: `prefix ${prefix}`,
    });

    await etcd.stop();
    const { lines, logger } = capture();
    const r = await startTestRouter(config(etcd.endpoint, prefix), { dir, runtime: { logger } });
    try {
      const book = r.router.runtime.engine.book as EtcdAddressBook;
      expect(book.staleSince).toBeInstanceOf(Date);
      expect(await get(r.port(), 'shop.test')).toEqual({ status: 200, backend: 'a' });
      const stale = lines.find((l) => l.stale === true);
      expect(stale?.msg).toMatch(
        /^address-books\.etcd: the store does not answer, serving stale routes from the last-good cache saved \d+s ago$/,
      );
      expect(stale).toMatchObject({ level: 'warn', cache: join(dir, 'etcd.last-good.json') });
      expect(typeof stale?.ageSeconds).toBe('number');

      await etcd.restart();
      const writer = new Etcd3({ hosts: etcd.endpoint });
      try {
        await writer
          .if(`${prefix}clusters/web`, 'Version', '>', 0)
          .then(
            writer.delete().key(`${prefix}backends/web/s1/${a.address}`),
            writer.put(`${prefix}backends/web/s1/${b.address}`).value('{}'),
          )
          .commit();
      } finally {
        writer.close();
      }
      await eventually(
        async () => (await get(r.port(), 'shop.test')).backend === 'b',
        30_000,
        'live data to replace the cache',
      );
      expect(book.staleSince).toBeUndefined();
      expect(lines.map((l) => l.msg)).toContain(
        'address-books.etcd: the store answers again, live routes replace the cached ones',
      );
    } finally {
      await r.close();
    }
    // The live data was saved for the next outage.
    expect(await readFile(join(dir, 'etcd.last-good.json'), 'utf8')).toContain(b.address);
  }, 60_000);

  it('etcd down and no cache file: the start fails as before, with a clear message', async () => {
    const empty = await tempDir();
    const down = `http://127.0.0.1:${await freePort()}`;
    try {
      const err = await startFails(empty, config(down, prefix));
      expect(err.code).toBe('SWB_ERR_ADDRESS_BOOK');
      expect(err.message).toContain('addressBook.endpoints: ');
      expect(err.message).toContain(`(no last-good cache at ${join(empty, 'etcd.last-good.json')})`);
      // Without `cache:` the message is the one it always was.
      const { cache: _c, ...book } = config(down, prefix).addressBook;
      const plain = await startFails(empty, { ...config(down, prefix), addressBook: book });
      expect(plain.code).toBe('SWB_ERR_ADDRESS_BOOK');
      expect(plain.message).not.toContain('last-good');
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }, 60_000);

  it('etcd down and a corrupt cache: a clear error, the cache ignored, the start fails', async () => {
    const bad = await tempDir({ 'etcd.last-good.json': '{"switchboard": "last-good", "format": 1, "bo' });
    const down = `http://127.0.0.1:${await freePort()}`;
    try {
      const { lines, logger } = capture();
      const err = await startTestRouter(config(down, prefix), { dir: bad, runtime: { logger } }).then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(err?.code).toBe('SWB_ERR_ADDRESS_BOOK');
      expect(err?.message).toContain(`last-good cache ${join(bad, 'etcd.last-good.json')}: not JSON`);
      expect(err?.message).toContain(', ignored)');
      const logged = lines.find((l) => l.msg === 'address-books.etcd: last-good cache ignored');
      expect(logged?.level).toBe('error');
      // A cache written for another prefix is refused the same way.
      await writeFile(
        join(bad, 'etcd.last-good.json'),
        JSON.stringify({
          switchboard: 'last-good',
          format: 1,
          book: 'etcd',
          source: 'prefix /other/',
          savedAt: new Date().toISOString(),
          data: {},
        }),
      );
      const other = await startFails(bad, config(down, prefix));
      expect(other.message).toContain(
        `written by the etcd book for prefix /other/, this book is etcd for prefix ${prefix}`,
      );
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  }, 60_000);
});
