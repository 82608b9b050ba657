/**
 * The etcd book against a real etcd (Debian's binary, started by the test on free loopback
 * ports): the conformance suite, two router instances applying the same update, bad keys, and
 * an etcd outage with the last snapshot serving and the watch resuming afterwards.
 */
import { request as httpRequest } from 'node:http';
import { Etcd3 } from 'etcd3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routingTableSchema } from '../../address-books/bfe/routing-table.ts';
import type { EtcdAddressBook } from '../../address-books/etcd/book.ts';
import { etcdAddressBook } from '../../address-books/etcd/book.ts';
import { etcdExportYaml, etcdImportTable } from '../../address-books/etcd/store.ts';
import { seededRandom } from '../../src/base/random.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { addressBookConformance, requestFor } from '../conformance/address-book.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const HAVE_ETCD = etcdBinary() !== undefined;
let etcd: TestEtcd;
let client: Etcd3;
let prefixes = 0;

if (HAVE_ETCD) {
  beforeAll(async () => {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
  }, 30_000);
  afterAll(async () => {
    client?.close();
    await etcd?.close();
  });
} else {
  describe.skip('etcd book: etcd is not installed (apt-get install etcd-server etcd-client)', () => {
    it('skipped', () => undefined);
  });
}

function makeBook(prefix: string) {
  const options = etcdAddressBook.options.parse({ endpoints: etcd.endpoint, prefix, debounce: '20ms' });
  return etcdAddressBook.create(options, {
    configDir: '/',
    registry: new LocalRegistry(),
    logger: pino({ level: 'silent' }),
    random: seededRandom(1),
  });
}

async function seed(prefix: string, port: number): Promise<void> {
  await client
    .put(`${prefix}products/p`)
    .value(JSON.stringify({ hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] }));
  await client.put(`${prefix}clusters/c`).value('subclusters: { s1: { weight: 1 } }\nretries: 1\n');
  await client.put(`${prefix}backends/c/s1/127.0.0.1:${port}`).value('');
}

if (HAVE_ETCD) {
  addressBookConformance('etcd', async () => {
    const prefix = `/conf${++prefixes}/`;
    await seed(prefix, 9001);
    return {
      book: makeBook(prefix),
      update: async () => {
        await client
          .if(`${prefix}clusters/c`, 'Version', '>', 0)
          .then(
            client.delete().key(`${prefix}backends/c/s1/127.0.0.1:9001`),
            client.put(`${prefix}backends/c/s1/127.0.0.1:9002`).value('{}'),
          )
          .commit();
      },
      breakSource: async () => {
        await client.put(`${prefix}backends/c/s1/127.0.0.1:9001`).value('{ "weight": -1 }');
      },
      cleanup: async () => {
        await client.delete().prefix(prefix);
      },
    };
  });
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

describe.skipIf(!HAVE_ETCD)('etcd book: errors name their key', () => {
  it.each([
    [
      'a backend of a missing sub-cluster',
      'backends/c/zz/127.0.0.1:1',
      '{}',
      'backends/c/zz/127.0.0.1:1: sub-cluster c/zz does not exist',
    ],
    ['a bad backend weight', 'backends/c/s1/127.0.0.1:9001', '{"weight": -1}', 'backends/c/s1/127.0.0.1:9001.weight'],
    ['a product value that is not an object', 'products/q', '[1]', 'products/q: expected an object'],
    ['an unknown key', 'colour', 'blue', 'colour: unknown key'],
    [
      'a rule naming a missing cluster',
      'products/q',
      '{"rules": [{"cond": "default_t()", "cluster": "gone"}]}',
      'products/q.rules[0].cluster: cluster gone does not exist',
    ],
  ])('%s', async (_what, key, value, expected) => {
    const prefix = `/bad${++prefixes}/`;
    await seed(prefix, 9001);
    await client.put(prefix + key).value(value);
    const book = makeBook(prefix);
    await expect(book.start()).rejects.toThrow(`key ${prefix}${expected}`);
    await book.close();
  });
});

describe.skipIf(!HAVE_ETCD)('etcd book: two routers on one etcd', () => {
  let a: TestBackend;
  let b: TestBackend;
  let r1: TestRouter;
  let r2: TestRouter;
  const prefix = '/fleet/';

  beforeAll(async () => {
    [a, b] = await Promise.all([startHttpBackend('a'), startHttpBackend('b')]);
    const table = routingTableSchema.parse({
      products: { shop: { hosts: ['shop.test'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
      clusters: { web: { subclusters: { s1: { weight: 1, backends: [{ address: a.address }] } } } },
    });
    await etcdImportTable(client, table, prefix);
    const config = {
      operator: 'round-robin',
      addressBook: { name: 'etcd', endpoints: etcd.endpoint, prefix, debounce: '20ms', reconnect: { max: '500ms' } },
    };
    [r1, r2] = await Promise.all([startTestRouter(config), startTestRouter(config)]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([r1?.close(), r2?.close()]);
    await Promise.all([a?.close(), b?.close()]);
  });

  it('routes from the imported keys on both instances, and export gives the table back', async () => {
    for (const r of [r1, r2]) expect(await get(r.port(), 'shop.test')).toEqual({ status: 200, backend: 'a' });
    expect(await etcdExportYaml(client, prefix)).toContain(a.address);
  });

  it('a product added with the client appears on both instances, at the same revision', async () => {
    for (const r of [r1, r2]) expect((await get(r.port(), 'new.test')).status).toBe(404);
    await client.put(`${prefix}clusters/nc`).value(JSON.stringify({ subclusters: { s: { weight: 1 } } }));
    await client.put(`${prefix}backends/nc/s/${b.address}`).value('{}');
    await client
      .put(`${prefix}products/new`)
      .value(JSON.stringify({ hosts: ['new.test'], rules: [{ cond: 'default_t()', cluster: 'nc' }] }));
    for (const r of [r1, r2]) {
      await eventually(async () => (await get(r.port(), 'new.test')).backend === 'b', 5_000, 'the new product');
    }
    // The "within a second" is measured by bench/db-books.ts; speed never decides a test.
    const books = [r1, r2].map((r) => r.router.runtime.engine.book as EtcdAddressBook);
    expect(books[0]!.snapshotRevision).toBe(books[1]!.snapshotRevision);
  });

  it('etcd stopped: routing continues on the last snapshot; restarted: the watch resumes and catches up', async () => {
    const books = [r1, r2].map((r) => r.router.runtime.engine.book as EtcdAddressBook);
    await etcd.stop();
    await eventually(() => books.every((bk) => !bk.connected), 20_000, 'both watches to notice the outage');
    for (const r of [r1, r2]) expect(await get(r.port(), 'shop.test')).toEqual({ status: 200, backend: 'a' });
    await etcd.restart();
    // Written as soon as etcd is back, before the watches have necessarily reconnected.
    const writer = new Etcd3({ hosts: etcd.endpoint });
    try {
      await writer.put(`${prefix}backends/web/s1/${a.address}`).value('{"weight": 1}');
      await writer.delete().key(`${prefix}backends/web/s1/${a.address}`);
      await writer.put(`${prefix}backends/web/s1/${b.address}`).value('{}');
    } finally {
      writer.close();
    }
    for (const r of [r1, r2]) {
      await eventually(
        async () => (await get(r.port(), 'shop.test')).backend === 'b',
        30_000,
        'the change after the outage',
      );
    }
    expect(books.every((bk) => bk.connected)).toBe(true);
  }, 60_000);
});

describe.skipIf(!HAVE_ETCD)('etcd book: lookups', () => {
  it('serves requests synchronously from the compiled keys', async () => {
    const prefix = `/look${++prefixes}/`;
    await seed(prefix, 9001);
    const book = makeBook(prefix);
    await book.start();
    expect(book.findAddresses(requestFor('a.test'))?.policy.retries).toBe(1);
    await book.close();
  });
});
