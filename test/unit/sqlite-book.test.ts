/**
 * The sqlite address book: the conformance suite on both models, row-labelled errors, and the
 * `db init|import|export` round trip. Real SQLite files in temp dirs; writes come from a second
 * connection, as another process would make them.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { sqliteAddressBook } from '../../address-books/sqlite/book.ts';
import { initDatabase } from '../../address-books/sqlite/schema.ts';
import { dbExport, dbImport, dbInit } from '../../address-books/sqlite/store.ts';
import { seededRandom } from '../../src/base/random.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { addressBookConformance, requestFor } from '../conformance/address-book.ts';
import { tempDir } from '../harness/router.ts';

function context(configDir: string): PluginContext {
  return { configDir, registry: new LocalRegistry(), logger: pino({ level: 'silent' }), random: seededRandom(1) };
}

function make(options: Record<string, unknown>, dir: string) {
  return sqliteAddressBook.create(sqliteAddressBook.options.parse({ pollInterval: 50, ...options }), context(dir));
}

/** Runs `sql` on a second connection (a separate writer, as in production). */
function write(file: string, sql: string): void {
  const db = new DatabaseSync(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

const BFE_ROWS = `
INSERT INTO products (name) VALUES ('p');
INSERT INTO hosts (host, product) VALUES ('a.test', 'p');
INSERT INTO basic_rules (product, position, hosts, paths, cluster) VALUES ('p', 0, '["a.test"]', NULL, 'c');
INSERT INTO clusters (name) VALUES ('c');
INSERT INTO subclusters (cluster, name, weight) VALUES ('c', 's1', 1);
INSERT INTO backends (cluster, subcluster, address) VALUES ('c', 's1', '127.0.0.1:9001');
`;

async function bfeDb(rows = BFE_ROWS): Promise<{ dir: string; file: string }> {
  const dir = await tempDir();
  const file = join(dir, 'routes.db');
  dbInit(file);
  write(file, rows);
  return { dir, file };
}

addressBookConformance('sqlite (bfe model)', async () => {
  const { dir, file } = await bfeDb();
  return {
    book: make({ path: 'routes.db' }, dir),
    update: async () => write(file, "UPDATE backends SET address = '127.0.0.1:9002'"),
    breakSource: async () =>
      write(
        file,
        "INSERT INTO advanced_rules (product, position, cond, cluster) VALUES ('p', 0, 'default_t()', 'gone')",
      ),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

addressBookConformance('sqlite (classic model)', async () => {
  const dir = await tempDir();
  const file = join(dir, 'routes.db');
  dbInit(file);
  write(file, `INSERT INTO servers (host, backends) VALUES ('a.test', '["127.0.0.1:9001"]')`);
  return {
    book: make({ path: 'routes.db', model: 'classic' }, dir),
    update: async () => write(file, `UPDATE servers SET backends = '127.0.0.1:9002'`),
    breakSource: async () => write(file, `UPDATE servers SET backends = '["nope"]'`),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('sqlite book: errors name their row', () => {
  it.each([
    // [what the row does wrong, SQL, expected text]
    [
      'backend address is not host:port',
      "UPDATE backends SET address = 'nope'",
      'backends(cluster=c, subcluster=s1, address=nope).address: expected host:port',
    ],
    [
      'basic rule names a missing cluster',
      "UPDATE basic_rules SET cluster = 'gone'",
      'basic_rules(product=p, position=0).cluster: cluster gone does not exist',
    ],
    ['cluster retries out of range', "UPDATE clusters SET retries = 99 WHERE name = 'c'", 'clusters(name=c).retries'],
    [
      'backend of a missing sub-cluster',
      "INSERT INTO backends (cluster, subcluster, address) VALUES ('c', 'zz', '127.0.0.1:1')",
      'backends(cluster=c, subcluster=zz, address=127.0.0.1:1): sub-cluster c/zz does not exist',
    ],
    [
      'host of a missing product',
      "INSERT INTO hosts (host, product) VALUES ('b.test', 'nope')",
      'hosts(host=b.test): product nope does not exist',
    ],
    [
      'health_check is not JSON',
      "UPDATE clusters SET health_check = '{bad' WHERE name = 'c'",
      'clusters(name=c).health_check: expected JSON',
    ],
  ])('%s', async (_what, sql, expected) => {
    const { dir, file } = await bfeDb();
    write(file, sql);
    const book = make({ path: 'routes.db' }, dir);
    const err = await book.start().then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe('SWB_ERR_CONFIG');
    expect(err?.message).toContain('addressBook.path: routes.db: ');
    expect(err?.message).toContain(expected);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reports a bad update once, keeps the old routes, then takes the next good commit', async () => {
    const { dir, file } = await bfeDb();
    const book = make({ path: 'routes.db' }, dir);
    await book.start();
    write(file, 'UPDATE backends SET weight = -1');
    expect(await book.poll()).toBe(false);
    expect(book.lastError).toContain('backends(cluster=c, subcluster=s1, address=127.0.0.1:9001).weight');
    expect(book.findAddresses(requestFor('a.test'))?.subclusters[0]?.backends[0]?.id).toBe('127.0.0.1:9001');
    write(file, "UPDATE backends SET weight = 3, address = '127.0.0.1:9003'");
    expect(await book.poll()).toBe(true);
    expect(book.lastError).toBeUndefined();
    const b = book.findAddresses(requestFor('a.test'))?.subclusters[0]?.backends[0];
    expect([b?.id, b?.weight]).toEqual(['127.0.0.1:9003', 3]);
    expect([...book.listBackends()].map((e) => e.backend.id)).toEqual(['127.0.0.1:9003']);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('logs a failure once while the same error repeats, and again after a good commit', async () => {
    const { dir, file } = await bfeDb();
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
    const book = sqliteAddressBook.create(
      sqliteAddressBook.options.parse({ path: 'routes.db', pollInterval: 60_000 }),
      {
        ...context(dir),
        logger,
      },
    );
    await book.start();
    write(file, 'UPDATE backends SET weight = -1');
    expect(await book.poll()).toBe(false);
    write(file, 'UPDATE backends SET weight = -2'); // another commit, the same error text
    expect(await book.poll()).toBe(false);
    expect(warnings).toEqual(['address-books.sqlite: reload failed, keeping the previous routes']);
    write(file, 'UPDATE backends SET weight = 1');
    expect(await book.poll()).toBe(true);
    write(file, 'UPDATE backends SET weight = -1');
    expect(await book.poll()).toBe(false);
    expect(warnings).toHaveLength(2);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails start() with SWB_ERR_ADDRESS_BOOK when the file is missing', async () => {
    const dir = await tempDir();
    await expect(make({ path: 'none.db' }, dir).start()).rejects.toMatchObject({ code: 'SWB_ERR_ADDRESS_BOOK' });
    await rm(dir, { recursive: true, force: true });
  });
});

describe('sqlite book: switchboard route', () => {
  it('explains a bfe-model decision step by step, as the bfe book does', async () => {
    const { dir } = await bfeDb();
    const book = make({ path: 'routes.db' }, dir);
    await book.start();
    const e = book.explain(requestFor('a.test', '/x'));
    expect([e?.routed, e?.product?.name, e?.basic?.rule]).toEqual([true, 'p', 'products.p.basicRules[0]']);
    expect(book.explain(requestFor('unknown.test'))?.routed).toBe(false);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('has no explanation for the classic model (route prints the candidates instead)', async () => {
    const dir = await tempDir();
    const file = join(dir, 'routes.db');
    dbInit(file);
    write(file, `INSERT INTO servers (host, backends) VALUES ('a.test', '["127.0.0.1:9001"]')`);
    const book = make({ path: 'routes.db', model: 'classic' }, dir);
    await book.start();
    expect(book.explain(requestFor('a.test'))).toBeUndefined();
    expect(book.findAddresses(requestFor('a.test'))).toBeDefined();
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('switchboard db import / export', () => {
  const routes = [
    'defaultProduct: p',
    'conditions: { canary: \'req_header_value_in("X-Canary", "1", false)\' }',
    'products:',
    '  p:',
    '    hosts: [a.test]',
    '    hostTags: { shop: [shop.test] }',
    '    vips: [10.0.0.10]',
    '    basicRules: [{ hosts: [a.test], paths: ["/static/*"], cluster: c }]',
    '    rules: [{ cond: "$canary", cluster: c }, { cond: "default_t()", cluster: d }]',
    'clusters:',
    '  c: { retries: 1, hash: { strategy: header, key: X-User }, healthCheck: { failNum: 3 },',
    '       subclusters: { s1: { weight: 70, backends: [{ address: "127.0.0.1:9001", weight: 2, name: one }] },',
    '                      s2: { weight: 30, backends: [{ address: "127.0.0.1:9002" }] } } }',
    '  d: { subclusters: { x: { weight: 1, backends: [{ address: "127.0.0.1:9003" }] } } }',
    '',
  ].join('\n');

  it('round-trips a routing table (import → export → same table), and the book serves it', async () => {
    const dir = await tempDir({ 'routes.yaml': routes });
    const file = join(dir, 'r.db');
    dbInit(file);
    expect((await dbImport(file, join(dir, 'routes.yaml'))).model).toBe('bfe');
    const exported = dbExport(file, 'bfe');
    await writeFile(join(dir, 'again.yaml'), exported);
    const again = join(dir, 'again.db');
    await dbImport(again, join(dir, 'again.yaml'));
    expect(dbExport(again, 'bfe').split('\n').slice(1)).toEqual(exported.split('\n').slice(1));
    expect(parseYaml(exported)).toMatchObject({ defaultProduct: 'p', clusters: { c: { retries: 1 } } });
    const book = make({ path: 'r.db' }, dir);
    await book.start();
    expect(book.findAddresses(requestFor('a.test', '/static/x'))?.cluster).toBe('c');
    expect(book.findAddresses(requestFor('a.test', '/'))?.cluster).toBe('d');
    expect(book.findAddresses(requestFor('unknown.test', '/'))?.product).toBe('p');
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('imports a whole config and a classic list, and rejects a bad source without touching the db', async () => {
    const dir = await tempDir({
      'switchboard.yaml': `addressBook: { name: bfe, routes: routes.yaml }\n`,
      'routes.yaml': routes,
      'servers.csv': 'host,path,backends\na.test,,127.0.0.1:9001 127.0.0.1:9002\n*.b.test,/api,127.0.0.1:9003\n',
      'bad.yaml': routes.replace('cluster: d', 'cluster: gone'),
    });
    const file = join(dir, 'r.db');
    await dbImport(file, join(dir, 'switchboard.yaml'));
    expect((await dbImport(file, join(dir, 'servers.csv'))).model).toBe('classic');
    expect(parseYaml(dbExport(file, 'classic'))).toEqual([
      { host: 'a.test', backends: ['127.0.0.1:9001', '127.0.0.1:9002'] },
      { host: '*.b.test', path: '/api', backends: ['127.0.0.1:9003'] },
    ]);
    const before = dbExport(file, 'bfe');
    await expect(dbImport(file, join(dir, 'bad.yaml'))).rejects.toThrow(/cluster gone does not exist/);
    expect(dbExport(file, 'bfe')).toBe(before);
    await rm(dir, { recursive: true, force: true });
  });

  it('init is idempotent and sets WAL', async () => {
    const dir = await tempDir();
    const file = join(dir, 'r.db');
    dbInit(file);
    dbInit(file);
    const db = new DatabaseSync(file);
    initDatabase(db);
    expect((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
    db.close();
    await rm(dir, { recursive: true, force: true });
  });
});
