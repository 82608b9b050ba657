/**
 * Structural sharing between snapshots (address-books/bfe/reuse.ts): a compile handed the live
 * snapshot as `previous` takes over what did not change and builds what did, with the same
 * routes, the same table and the same errors as a full build. Also through the books: a reload
 * of the `bfe` (routes file) and `sqlite` books, and a worker thread's new snapshot, keep the
 * unchanged products' Candidates.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bfeAddressBook } from '../../address-books/bfe/book.ts';
import { compileRoutingTable } from '../../address-books/bfe/compile.ts';
import { deepEqual } from '../../address-books/bfe/reuse.ts';
import { sqliteAddressBook } from '../../address-books/sqlite/book.ts';
import { dbInit } from '../../address-books/sqlite/store.ts';
import { SnapshotBook as WorkerSnapshotBook } from '../../app/worker/book.ts';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { seededRandom } from '../../src/base/random.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import type { Request } from '../../src/contracts/types.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { createRequest } from '../../src/request/request.ts';
import { tempDir } from '../harness/router.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests change deep plain data freely
type Loose = Record<string, any>;

function req(host: string, path = '/'): Request {
  return createRequest({
    protocol: 'http1',
    host,
    path,
    headers: [],
    clientIp: '192.0.2.1',
    clientPort: 40000,
    localIp: '127.0.0.1',
    localPort: 8080,
    listener: 'web',
  });
}

const one = (port: number) => ({ subclusters: { s1: { weight: 1, backends: [{ address: `127.0.0.1:${port}` }] } } });

/** A fresh copy each call, as a reload parses its source anew. */
function table(): Loose {
  return {
    conditions: { api: 'req_path_prefix_in("/api", false)' },
    products: {
      a: {
        hosts: ['a.test'],
        rules: [
          { cond: '$api', cluster: 'ca' },
          { cond: 'default_t()', cluster: 'shared' },
        ],
      },
      b: { hosts: ['b.test', 'b2.test'], basicRules: [{ paths: ['/x/*'], cluster: 'cb' }] },
      c: { hosts: ['c.test'], vips: ['192.0.2.10'], rules: [{ cond: 'default_t()', cluster: 'shared' }] },
    },
    clusters: { ca: one(9001), cb: one(9002), shared: one(9003) },
  };
}

const backendOf = (snap: ReturnType<typeof compileRoutingTable>, host: string, path = '/') =>
  snap.findAddresses(req(host, path))?.subclusters[0]?.backends[0]?.id;

describe('snapshot reuse', () => {
  it('an identical table reuses every product, cluster and host entry, and routes the same', () => {
    const first = compileRoutingTable(table());
    const next = compileRoutingTable(table(), { previous: first });
    for (const name of ['a', 'b', 'c']) expect(next.products.get(name)).toBe(first.products.get(name));
    for (const name of ['ca', 'cb', 'shared']) expect(next.clusters.get(name)).toBe(first.clusters.get(name));
    expect(next.table.products.a).toBe(first.table.products.a);
    expect(next.hosts.lookup('b2.test')).toBe(first.hosts.lookup('b2.test'));
    expect(next.vips.get('192.0.2.10')).toBe(first.vips.get('192.0.2.10'));
    expect(backendOf(next, 'a.test', '/api/1')).toBe('127.0.0.1:9001');
    expect(backendOf(next, 'b.test', '/x/1')).toBe('127.0.0.1:9002');
    expect(backendOf(next, 'c.test')).toBe('127.0.0.1:9003');
  });

  it('a changed cluster is rebuilt, with every product that names it; the others are reused', () => {
    const first = compileRoutingTable(table());
    const t = table();
    t.clusters.shared = one(9013);
    const next = compileRoutingTable(t, { previous: first });
    expect(next.clusters.get('shared')).not.toBe(first.clusters.get('shared'));
    expect(next.clusters.get('ca')).toBe(first.clusters.get('ca'));
    expect(next.products.get('a')).not.toBe(first.products.get('a'));
    expect(next.products.get('c')).not.toBe(first.products.get('c'));
    expect(next.products.get('b')).toBe(first.products.get('b'));
    expect(backendOf(next, 'a.test')).toBe('127.0.0.1:9013');
    expect(backendOf(next, 'a.test', '/api')).toBe('127.0.0.1:9001');
    expect(backendOf(next, 'c.test')).toBe('127.0.0.1:9013');
    expect(backendOf(first, 'c.test')).toBe('127.0.0.1:9003'); // the old snapshot is untouched
  });

  it('a changed product is rebuilt: a new host routes, a dropped one does not', () => {
    const first = compileRoutingTable(table());
    const t = table();
    t.products.b.hosts = ['b.test', 'b3.test'];
    const next = compileRoutingTable(t, { previous: first });
    expect(next.products.get('b')).not.toBe(first.products.get('b'));
    expect(next.products.get('a')).toBe(first.products.get('a'));
    expect(backendOf(next, 'b3.test', '/x/y')).toBe('127.0.0.1:9002');
    expect(next.findAddresses(req('b2.test', '/x/y'))).toBeUndefined();
    expect(backendOf(first, 'b2.test', '/x/y')).toBe('127.0.0.1:9002');
  });

  it('a removed product and cluster are gone', () => {
    const first = compileRoutingTable(table());
    const t = table();
    delete t.products.b;
    delete t.clusters.cb;
    const next = compileRoutingTable(t, { previous: first });
    expect([...next.products.keys()]).toEqual(['a', 'c']);
    expect([...next.clusters.keys()]).toEqual(['ca', 'shared']);
    expect(next.findAddresses(req('b.test', '/x/1'))).toBeUndefined();
    expect([...next.backends()].map((b) => b.cluster)).toEqual(['ca', 'shared']);
  });

  it('changed named conditions rebuild the rules that may use them', () => {
    const first = compileRoutingTable(table());
    const t = table();
    t.conditions.api = 'req_path_prefix_in("/v2", false)';
    const next = compileRoutingTable(t, { previous: first });
    expect(next.products.get('a')).not.toBe(first.products.get('a'));
    expect(backendOf(next, 'a.test', '/api')).toBe('127.0.0.1:9003');
    expect(backendOf(next, 'a.test', '/v2')).toBe('127.0.0.1:9001');
  });

  it('a host-tag condition reads the new host table, not the one it was first compiled with', () => {
    const t1: Loose = {
      products: {
        web: {
          hosts: ['*.example.test'],
          rules: [
            { cond: 'req_host_tag_in("gold")', cluster: 'gold' },
            { cond: 'default_t()', cluster: 'plain' },
          ],
        },
        other: { hostTags: { gold: ['x.example.test'] }, rules: [{ cond: 'default_t()', cluster: 'plain' }] },
      },
      clusters: { gold: one(9101), plain: one(9102) },
    };
    const first = compileRoutingTable(t1);
    const t2 = structuredClone(t1);
    t2.products.other.hostTags = { gold: ['y.example.test'] };
    const next = compileRoutingTable(t2, { previous: first });
    // x.example.test now falls to web's wildcard, which has no tag.
    expect(backendOf(next, 'x.example.test')).toBe('127.0.0.1:9102');
    expect(backendOf(next, 'y.example.test')).toBe('127.0.0.1:9102');
    expect(backendOf(first, 'x.example.test')).toBe('127.0.0.1:9102');
  });

  it('the table is the one a full build makes (same content, same key order)', () => {
    const first = compileRoutingTable(table());
    const t = table();
    t.clusters = { shared: one(9003), cb: one(9022), ca: one(9001) };
    t.products.b.basicRules[0].paths = ['/y/*'];
    const next = compileRoutingTable(t, { previous: first });
    expect(JSON.stringify(next.table)).toBe(JSON.stringify(compileRoutingTable(structuredClone(t)).table));
  });

  it('a bad table fails with the same error as without a previous snapshot', () => {
    const first = compileRoutingTable(table());
    const messageOf = (input: Loose, previous?: typeof first) => {
      try {
        compileRoutingTable(input, { previous });
      } catch (e) {
        if (isSwitchboardError(e)) return e.message;
        throw e;
      }
      throw new Error('compiled');
    };
    const bad = table();
    bad.products.d = { hosts: ['b2.test'], rules: [{ cond: 'default_t()', cluster: 'gone' }] };
    bad.products.a.rules[1].cluster = 'nope';
    bad.clusters.cb.subclusters.s1.weight = 0;
    const expected = messageOf(structuredClone(bad));
    expect(expected).toMatch(/already listed at products\.b\.hosts\[1\]/);
    expect(messageOf(bad, first)).toBe(expected);
    expect(backendOf(first, 'b2.test', '/x/1')).toBe('127.0.0.1:9002');
  });

  it('the host table is patched: a host moves between products, a bare * and a wildcard go', () => {
    const t1 = table();
    t1.products.c.hosts = ['c.test', '*.wild.test', '*'];
    const first = compileRoutingTable(t1);
    expect(backendOf(first, 'x.wild.test')).toBe('127.0.0.1:9003');
    expect(backendOf(first, 'anything.test')).toBe('127.0.0.1:9003');
    const t2 = table();
    t2.products.b.hosts = ['b.test'];
    t2.products.a.hosts = ['a.test', 'b2.test'];
    const next = compileRoutingTable(t2, { previous: first });
    expect(next.hosts.lookup('b2.test')?.product).toBe('a');
    expect(next.hosts.lookup('b2.test')?.where).toBe('products.a.hosts[1]');
    expect(backendOf(next, 'b2.test')).toBe('127.0.0.1:9003');
    expect(next.findAddresses(req('x.wild.test'))).toBeUndefined();
    expect(next.findAddresses(req('anything.test'))).toBeUndefined();
    expect(first.hosts.lookup('b2.test')?.product).toBe('b');
    expect(next.hosts.size).toBe(compileRoutingTable(structuredClone(t2)).hosts.size);
  });

  it('a clash between a changed product and a later unchanged one is reported as a full build does', () => {
    const first = compileRoutingTable(table());
    const bad = table();
    bad.products.a.hosts = ['a.test', 'c.test'];
    let message = '';
    try {
      compileRoutingTable(bad, { previous: first });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('products.c.hosts[0]: host c.test is already listed at products.a.hosts[1]');
  });

  it('nothing is reused under another path prefix', () => {
    const first = compileRoutingTable(table());
    const next = compileRoutingTable(table(), { previous: first, pathPrefix: 'addressBook' });
    expect(next.products.get('a')).not.toBe(first.products.get('a'));
    expect(next.hosts.lookup('a.test')?.where).toBe('addressBook.products.a.hosts[0]');
  });

  it('the same input objects: matched by identity (no deepEqual), the validated records are the previous ones', () => {
    const reads = { n: 0 };
    const watched = (o: object) =>
      new Proxy(o, {
        ownKeys(target) {
          reads.n++;
          return Reflect.ownKeys(target);
        },
      });
    const t = table();
    for (const name of Object.keys(t.products)) t.products[name] = watched(t.products[name]);
    // Not cb: the changed one is compared (deepEqual) with its previous input.
    for (const name of ['ca', 'shared']) t.clusters[name] = watched(t.clusters[name]);
    const first = compileRoutingTable(t);
    reads.n = 0;
    const next = compileRoutingTable({ ...t, clusters: { ...t.clusters, cb: one(9052) } }, { previous: first });
    expect(reads.n).toBe(0);
    expect(next.table.products).toBe(first.table.products);
    expect(next.table.clusters).not.toBe(first.table.clusters);
    expect(next.table.clusters.ca).toBe(first.table.clusters.ca);
    expect(backendOf(next, 'b.test', '/x/1')).toBe('127.0.0.1:9052');
    // Equal copies still match, by deepEqual.
    const copy = compileRoutingTable(table(), { previous: next });
    expect(copy.table.products.a).toBe(first.table.products.a);
    expect(copy.clusters.get('ca')).toBe(first.clusters.get('ca'));
  });

  it('no product changed: the host and VIP tables are the previous ones; else filled or patched', () => {
    const t = table();
    const first = compileRoutingTable(t);
    const clustersOnly = compileRoutingTable(
      { ...t, clusters: { ...t.clusters, shared: one(9063) } },
      { previous: first },
    );
    expect(clustersOnly.hosts).toBe(first.hosts);
    expect(clustersOnly.vips).toBe(first.vips);
    expect(backendOf(clustersOnly, 'c.test')).toBe('127.0.0.1:9063');
    const same = compileRoutingTable(t, { previous: clustersOnly });
    expect(same.hosts).toBe(first.hosts);
    // A changed product, another order, another default product: not shared.
    const changed = compileRoutingTable(
      { ...t, products: { ...t.products, b: { hosts: ['b.test'] } } },
      { previous: first },
    );
    expect(changed.hosts).not.toBe(first.hosts);
    expect(changed.hosts.lookup('b2.test')).toBeUndefined();
    const { a, ...rest } = t.products;
    const reordered = compileRoutingTable({ ...t, products: { ...rest, a } }, { previous: first });
    expect(reordered.hosts).not.toBe(first.hosts);
    expect(reordered.hosts.size).toBe(first.hosts.size);
    const withDefault = compileRoutingTable({ ...t, defaultProduct: 'a' }, { previous: first });
    expect(withDefault.hosts).not.toBe(first.hosts);
    expect(backendOf(withDefault, 'unknown.test')).toBe('127.0.0.1:9003');
  });

  it('a build with a host-tag rule never shares its host table', () => {
    const t: Loose = {
      products: {
        web: {
          hosts: ['w.test'],
          hostTags: { gold: ['g.test'] },
          rules: [{ cond: 'req_host_tag_in("gold")', cluster: 'gold' }],
        },
      },
      clusters: { gold: one(9071) },
    };
    const first = compileRoutingTable(t);
    const next = compileRoutingTable({ ...t, clusters: { gold: one(9072) } }, { previous: first });
    expect(next.hosts).not.toBe(first.hosts);
    expect(backendOf(next, 'g.test')).toBe('127.0.0.1:9072');
  });

  it('sections that are not plain records are validated as before (same table, same errors)', () => {
    const messageOf = (input: unknown) => {
      try {
        compileRoutingTable(input);
      } catch (e) {
        if (isSwitchboardError(e)) return e.message;
        throw e;
      }
      return 'compiled';
    };
    const parsed = JSON.parse('{"products":{"__proto__":{"hosts":["x.test"]},"a":{"hosts":["a.test"]}},"clusters":{}}');
    expect(Object.keys(compileRoutingTable(parsed).table.products)).toEqual(['a']);
    expect(messageOf({ products: { '': { hosts: ['x.test'] } } })).toMatch(/products/);
    expect(messageOf({ products: [] })).toMatch(/products/);
    expect(messageOf({ products: null })).toMatch(/products/);
    expect(messageOf({ clusters: 5, products: {} })).toMatch(/clusters/);
    expect(messageOf({ products: {}, extra: 1 })).toMatch(/extra/);
    expect(JSON.stringify(compileRoutingTable({ clusters: {}, conditions: {} }).table)).toBe(
      '{"conditions":{},"products":{},"clusters":{}}',
    );
  });

  it('deepEqual: plain data, keys in order', () => {
    expect(deepEqual({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] })).toBe(true);
    expect(deepEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(deepEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(deepEqual({ a: undefined }, {})).toBe(false);
    expect(deepEqual(0, -0)).toBe(false);
    expect(deepEqual(new Date(0), new Date(0))).toBe(false);
  });
});

function context(configDir: string): PluginContext {
  return { configDir, registry: new LocalRegistry(), logger: pino({ level: 'silent' }), random: seededRandom(1) };
}

describe('reuse across book reloads', () => {
  it('bfe routes file: a rewrite that moves one backend keeps the other products’ candidates', async () => {
    const dir = await tempDir();
    try {
      const t = table();
      await writeFile(join(dir, 'routes.json'), JSON.stringify(t));
      const book = bfeAddressBook.create(bfeAddressBook.options.parse({ routes: 'routes.json' }), context(dir));
      await book.start();
      const b = book.findAddresses(req('b.test', '/x/1'));
      const c = book.findAddresses(req('c.test'));
      t.clusters.cb = one(9032);
      await writeFile(join(dir, 'routes.json'), JSON.stringify(t));
      expect(await book.reload()).toBe(true);
      expect(book.findAddresses(req('c.test'))).toBe(c);
      expect(book.findAddresses(req('b.test', '/x/1'))).not.toBe(b);
      expect(book.findAddresses(req('b.test', '/x/1'))?.subclusters[0]?.backends[0]?.id).toBe('127.0.0.1:9032');
      await book.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('worker threads: a new snapshot version keeps the other products’ candidates', () => {
    const t = table();
    const spec = (version: number) => ({ kind: 'bfe' as const, table: compileRoutingTable(t).table, version });
    const book = new WorkerSnapshotBook(structuredClone(spec(1)));
    const b = book.findAddresses(req('b.test', '/x/1'));
    const c = book.findAddresses(req('c.test'));
    t.clusters.cb = one(9042);
    book.apply(structuredClone(spec(2))); // as posted to the thread: fresh objects
    expect(book.findAddresses(req('c.test'))).toBe(c);
    expect(book.findAddresses(req('b.test', '/x/1'))).not.toBe(b);
    expect(book.findAddresses(req('b.test', '/x/1'))?.subclusters[0]?.backends[0]?.id).toBe('127.0.0.1:9042');
  });

  it('sqlite: a commit that moves one backend keeps the other products’ candidates', async () => {
    const dir = await tempDir();
    const file = join(dir, 'routes.db');
    dbInit(file);
    const w = new DatabaseSync(file);
    try {
      w.exec(`
        INSERT INTO products (name) VALUES ('p'), ('q');
        INSERT INTO hosts (host, product) VALUES ('p.test', 'p'), ('q.test', 'q');
        INSERT INTO advanced_rules (product, position, cond, cluster) VALUES ('p', 0, 'default_t()', 'cp'), ('q', 0, 'default_t()', 'cq');
        INSERT INTO clusters (name) VALUES ('cp'), ('cq');
        INSERT INTO subclusters (cluster, name, weight) VALUES ('cp', 's1', 1), ('cq', 's1', 1);
        INSERT INTO backends (cluster, subcluster, address) VALUES ('cp', 's1', '127.0.0.1:9001'), ('cq', 's1', '127.0.0.1:9002');
      `);
      const options = sqliteAddressBook.options.parse({ path: 'routes.db', pollInterval: 3_600_000 });
      const book = sqliteAddressBook.create(options, context(dir));
      await book.start();
      const p = book.findAddresses(req('p.test'));
      const q = book.findAddresses(req('q.test'));
      w.exec(`UPDATE backends SET address = '127.0.0.1:9011' WHERE cluster = 'cp'`);
      expect(await book.poll()).toBe(true);
      expect(book.findAddresses(req('q.test'))).toBe(q);
      expect(book.findAddresses(req('p.test'))).not.toBe(p);
      expect(book.findAddresses(req('p.test'))?.subclusters[0]?.backends[0]?.id).toBe('127.0.0.1:9011');
      await book.close();
    } finally {
      w.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
