/**
 * Last known good (issue 17 item 12) on the sqlite book, with real SQLite files in temp dirs:
 * the cache is written after each live load, read at start only when the file cannot be
 * opened or read (missing, locked), logged as stale with its age, and replaced by live data when
 * the file answers again; no cache or a corrupt cache fails the start as before, with a clear
 * message. Plus the cache file itself (`LastGoodFile`) and the time-sliced compile: the same
 * snapshot as the one-go compile, with other callbacks running in between.
 */
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { compileRoutingTable, compileRoutingTableSliced } from '../../address-books/bfe/compile.ts';
import { Issues } from '../../address-books/bfe/issues.ts';
import { routingTableSchema } from '../../address-books/bfe/routing-table.ts';
import { formatAge, LastGoodFile } from '../../address-books/lib/last-good.ts';
import { runToEnd, stringifySteps } from '../../address-books/lib/sliced.ts';
import { type SqliteAddressBook, sqliteAddressBook } from '../../address-books/sqlite/book.ts';
import { dbInit } from '../../address-books/sqlite/store.ts';
import { seededRandom } from '../../src/base/random.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { requestFor } from '../conformance/address-book.ts';
import { tempDir } from '../harness/router.ts';

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

function make(dir: string, options: Record<string, unknown> = {}) {
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const book = sqliteAddressBook.create(
    sqliteAddressBook.options.parse({
      path: 'routes.db',
      pollInterval: 60_000,
      cache: 'routes.last-good.json',
      ...options,
    }),
    { configDir: dir, registry: new LocalRegistry(), logger, random: seededRandom(1) },
  ) as SqliteAddressBook;
  return { book, lines };
}

function write(file: string, sql: string): void {
  const db = new DatabaseSync(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

const ROWS = (port: number) => `
INSERT INTO products (name) VALUES ('p');
INSERT INTO hosts (host, product) VALUES ('a.test', 'p');
INSERT INTO advanced_rules (product, position, cond, cluster) VALUES ('p', 0, 'default_t()', 'c');
INSERT INTO clusters (name) VALUES ('c');
INSERT INTO subclusters (cluster, name, weight) VALUES ('c', 's1', 1);
INSERT INTO backends (cluster, subcluster, address) VALUES ('c', 's1', '127.0.0.1:${port}');
`;

function backendOf(book: SqliteAddressBook): string | undefined {
  return book.findAddresses(requestFor('a.test'))?.subclusters[0]?.backends[0]?.id;
}

/** A dir with routes.db routing a.test to 127.0.0.1:9001 and the cache a first book wrote. */
async function withCache(): Promise<string> {
  const dir = await tempDir();
  dbInit(join(dir, 'routes.db'));
  write(join(dir, 'routes.db'), ROWS(9001));
  const { book } = make(dir);
  await book.start();
  await book.close(); // waits for the cache write
  return dir;
}

describe('last known good: sqlite book', () => {
  it('writes the cache atomically after a live load (no temp file left)', async () => {
    const dir = await withCache();
    const saved = JSON.parse(await readFile(join(dir, 'routes.last-good.json'), 'utf8'));
    expect(saved).toMatchObject({ switchboard: 'last-good', format: 1, book: 'sqlite', source: 'bfe routes.db' });
    expect(Number.isNaN(Date.parse(saved.savedAt))).toBe(false);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it('database missing at start: serves the cache, logged as stale with its age; the file back: live data', async () => {
    const dir = await withCache();
    await unlink(join(dir, 'routes.db'));
    for (const f of await readdir(dir)) if (f.startsWith('routes.db-')) await unlink(join(dir, f));
    const { book, lines } = make(dir);
    await book.start();
    expect(backendOf(book)).toBe('127.0.0.1:9001');
    expect(book.staleSince).toBeInstanceOf(Date);
    const stale = lines.find((l) => l.stale === true);
    expect(stale?.msg).toMatch(
      /^address-books\.sqlite: the store does not answer, serving stale routes from the last-good cache saved \d+s ago$/,
    );
    expect(stale).toMatchObject({ level: 40, cache: join(dir, 'routes.last-good.json') });
    expect(typeof stale?.ageSeconds).toBe('number');
    expect(String(stale?.error)).toContain('open:');
    // Polls while the file is still missing change nothing and log nothing new.
    expect(await book.poll()).toBe(false);
    expect(lines.filter((l) => l.level >= 40)).toHaveLength(1);
    dbInit(join(dir, 'routes.db'));
    write(join(dir, 'routes.db'), ROWS(9002));
    expect(await book.poll()).toBe(true);
    expect(backendOf(book)).toBe('127.0.0.1:9002');
    expect(book.staleSince).toBeUndefined();
    expect(lines.at(-1)?.msg).toBe(
      'address-books.sqlite: the store answers again, live routes replace the cached ones',
    );
    await book.close();
    // The live load was saved: the next outage starts from 9002.
    expect(await readFile(join(dir, 'routes.last-good.json'), 'utf8')).toContain('127.0.0.1:9002');
    await rm(dir, { recursive: true, force: true });
  });

  it('database locked at start: serves the cache until the lock is released', async () => {
    const dir = await withCache();
    const locker = new DatabaseSync(join(dir, 'routes.db'));
    locker.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;');
    const { book } = make(dir);
    try {
      await book.start();
      expect(book.staleSince).toBeInstanceOf(Date);
      expect(backendOf(book)).toBe('127.0.0.1:9001');
      locker.exec("UPDATE backends SET address = '127.0.0.1:9003'; COMMIT;");
    } finally {
      locker.close();
    }
    expect(await book.poll()).toBe(true);
    expect([backendOf(book), book.staleSince]).toEqual(['127.0.0.1:9003', undefined]);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('database missing and no cache file: the start fails as before, saying there is no cache', async () => {
    const dir = await tempDir();
    const { book } = make(dir);
    const err = await book.start().then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe('SWB_ERR_ADDRESS_BOOK');
    expect(err?.message).toContain('addressBook.path: routes.db: open:');
    expect(err?.message).toContain(`(no last-good cache at ${join(dir, 'routes.last-good.json')})`);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['truncated JSON', (t: string) => t.slice(0, t.length / 2), 'not JSON'],
    ['not a cache file', () => '{"hello": 1}', 'not a last-good cache file (switchboard:'],
    ['another book', (t: string) => t.replace('"book":"sqlite"', '"book":"etcd"'), 'written by the etcd book'],
    ['another source', (t: string) => t.replace('bfe routes.db', 'bfe other.db'), 'for bfe other.db, this book'],
    ['data that does not compile', (t: string) => t.replace('127.0.0.1:9001', 'nope'), 'expected host:port'],
  ])(
    'corrupt cache (%s) and database missing: a clear error, the cache ignored, the start fails',
    async (_what, corrupt, expected) => {
      const dir = await withCache();
      const cache = join(dir, 'routes.last-good.json');
      await writeFile(cache, corrupt(await readFile(cache, 'utf8')));
      await rm(join(dir, 'routes.db'));
      const { book, lines } = make(dir);
      const err = await book.start().then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(err?.code).toBe('SWB_ERR_ADDRESS_BOOK');
      expect(err?.message).toContain('routes.db: open:');
      expect(err?.message).toContain(expected);
      expect(err?.message).toContain(', ignored)');
      const logged = lines.find((l) => l.msg === 'address-books.sqlite: last-good cache ignored');
      expect([logged?.level, String(logged?.error)]).toEqual([50, expect.stringContaining(expected)]);
      expect(book.findAddresses(requestFor('a.test'))).toBeUndefined();
      await rm(dir, { recursive: true, force: true });
    },
  );

  it('a corrupt cache is never read while the database answers', async () => {
    const dir = await withCache();
    await writeFile(join(dir, 'routes.last-good.json'), '{ broken');
    const { book, lines } = make(dir);
    await book.start();
    expect([backendOf(book), book.staleSince]).toEqual(['127.0.0.1:9001', undefined]);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    await book.close();
    expect(JSON.parse(await readFile(join(dir, 'routes.last-good.json'), 'utf8')).book).toBe('sqlite');
    await rm(dir, { recursive: true, force: true });
  });

  it('a bad row still fails the start (not an outage): the cache is not used', async () => {
    const dir = await withCache();
    write(join(dir, 'routes.db'), "UPDATE backends SET address = 'nope'");
    const { book } = make(dir);
    await expect(book.start()).rejects.toMatchObject({ code: 'SWB_ERR_CONFIG' });
    expect(book.staleSince).toBeUndefined();
    await rm(dir, { recursive: true, force: true });
  });

  it('the classic model caches and restores too', async () => {
    const dir = await tempDir();
    const db = join(dir, 'routes.db');
    dbInit(db);
    write(db, `INSERT INTO servers (host, backends) VALUES ('a.test', '["127.0.0.1:9005"]')`);
    const first = make(dir, { model: 'classic' });
    await first.book.start();
    await first.book.close();
    await rm(db);
    const { book } = make(dir, { model: 'classic' });
    await book.start();
    expect([backendOf(book), book.staleSince instanceof Date]).toEqual(['127.0.0.1:9005', true]);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('last known good: the cache file', () => {
  it('saves only the newest of several quick saves, and loads what it saved', async () => {
    const dir = await tempDir();
    const f = new LastGoodFile(join(dir, 'c.json'), { book: 'x', source: 's' }, pino({ level: 'silent' }), 'x');
    expect(await f.load()).toBeUndefined();
    for (let i = 0; i < 5; i++) f.save({ n: i });
    await f.flushed();
    const loaded = await f.load();
    expect(loaded?.data).toEqual({ n: 4 });
    expect(Date.now() - loaded!.savedAt.getTime()).toBeGreaterThanOrEqual(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('a save that cannot be written is logged once and throws nothing', async () => {
    const lines: Line[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
    const f = new LastGoodFile('/nonexistent-dir/c.json', { book: 'x', source: 's' }, logger, 'address-books.x');
    f.save({});
    await f.flushed();
    f.save({});
    await f.flushed();
    expect(lines.map((l) => l.msg)).toEqual(['address-books.x: saving the last-good cache failed']);
  });

  it.each([
    [0, '0s'],
    [59_400, '59s'],
    [61_000, '1m01s'],
    [3_600_000 + 12 * 60_000, '1h12m'],
  ])('formatAge(%d) = %s', (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });
});

describe('time-sliced compile', () => {
  function bigTable(products: number) {
    const p: Record<string, unknown> = {};
    const c: Record<string, unknown> = {};
    for (let i = 0; i < products; i++) {
      const hosts = [`a${i}.test`, `b${i}.test`];
      p[`p${i}`] = {
        hosts,
        basicRules: [{ hosts, paths: ['/x/*'], cluster: `c${i}` }],
        rules: [{ cond: 'default_t()', cluster: `c${i}` }],
      };
      c[`c${i}`] = { subclusters: { s: { weight: 1, backends: [{ address: `10.0.${i >> 8}.${i & 255}:80` }] } } };
    }
    return { defaultProduct: 'p0', products: p, clusters: c };
  }

  it('gives other callbacks their turn and builds the same snapshot as the one-go compile', async () => {
    const input = bigTable(200);
    let turns = 0;
    let building = true;
    const tick = () => {
      turns++;
      if (building) setImmediate(tick);
    };
    setImmediate(tick);
    const sliced = await compileRoutingTableSliced(input, {}, 0);
    building = false;
    expect(turns).toBeGreaterThan(100);
    const whole = compileRoutingTable(input);
    expect(sliced.table).toEqual(whole.table);
    expect(JSON.stringify(sliced.table)).toBe(JSON.stringify(whole.table));
    const req = requestFor('b7.test', '/x/1');
    expect(sliced.findAddresses(req)).toEqual(whole.findAddresses(req));
  });

  it.each([
    ['an unknown top-level key', { colour: 1 }],
    ['a bad product key', { products: { p: { hosts: ['a.test'], bad: 1 } } }],
    ['products not a record', { products: [] }],
    [
      'two bad products and a bad cluster',
      {
        products: { p: { hosts: 1 }, q: { rules: [{}] } },
        clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: 'x' }] } } } },
      },
    ],
  ])('validates piece by piece with the messages of the whole-table parse: %s', async (_what, input) => {
    const whole = routingTableSchema.safeParse(input);
    const issues = new Issues();
    issues.addZod(whole.error!, 'addressBook', routingTableSchema);
    const expected = `src: ${issues.list.join('; ')}`;
    const options = { pathPrefix: 'addressBook', source: 'src' };
    expect(() => compileRoutingTable(input, options)).toThrow(expected);
    await expect(compileRoutingTableSliced(input, options)).rejects.toThrow(expected);
  });
});

describe('stringifySteps', () => {
  it.each([
    ['a routing table', { defaultProduct: 'p', products: { p: { hosts: ['a', 'b'] } }, clusters: {} }],
    [
      'a classic list',
      [
        { host: 'a', backends: ['1.2.3.4:80'] },
        { host: 'b', path: '/x', backends: [] },
      ],
    ],
    ['undefined members and odd keys', { a: undefined, 'b"c': [1, undefined, null], d: { e: { f: [1] } } }],
    ['scalars', 'text'],
  ])('writes the same text as JSON.stringify: %s', (_what, value) => {
    for (const depth of [0, 1, 2, 3, 5]) expect(runToEnd(stringifySteps(value, depth))).toBe(JSON.stringify(value));
  });
});
