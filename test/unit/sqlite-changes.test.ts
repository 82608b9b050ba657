/**
 * The sqlite book reads only what the change log names (address-books/sqlite/changes.ts,
 * read-changed.ts `readBfeChangedSteps`): over random edits of every table from a second connection
 * (inserts, updates, deletes, renames, INSERT OR REPLACE and UPDATE OR REPLACE that move a row
 * to another product, bad rows) each read equals a fresh whole read (keys in order, problems);
 * and the whole read is taken whenever the log cannot tell: the first read, a file of schema
 * version 1 and its migration, a dropped trigger, trimmed or deleted entries, a bulk write, a
 * read with problems. Real SQLite files; a write by the sqlite3 shell reaches the book.
 */
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../address-books/lib/sliced.ts';
import { sqliteAddressBook } from '../../address-books/sqlite/book.ts';
import { MAX_ENTRIES } from '../../address-books/sqlite/changes.ts';
import { readBfeSteps, readStepsInTransaction } from '../../address-books/sqlite/read.ts';
import { type ChangedRead, type ReadBase, readBfeChangedSteps } from '../../address-books/sqlite/read-changed.ts';
import { initDatabase, SCHEMA_SQL } from '../../address-books/sqlite/schema.ts';
import { seededRandom } from '../../src/base/random.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { requestFor } from '../conformance/address-book.ts';
import { tempDir } from '../harness/router.ts';

type Json = Record<string, unknown>;

/** A writer and a read-only reader on one file, as the book and another process hold them. */
async function withDb(
  body: (w: DatabaseSync, r: DatabaseSync, file: string) => Promise<void> | void,
  init: (w: DatabaseSync) => void = initDatabase,
): Promise<void> {
  const dir = await tempDir();
  const file = join(dir, 'routes.db');
  const w = new DatabaseSync(file);
  init(w);
  const r = new DatabaseSync(file, { readOnly: true });
  try {
    await body(w, r, file);
  } finally {
    r.close();
    w.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function fresh(r: DatabaseSync) {
  return runToEnd(readStepsInTransaction(r, readBfeSteps(r, false)));
}

/** Reads as the book does: from the last read without problems, keeping the last input's objects. */
class Reader {
  base: ReadBase | undefined;
  last: unknown;
  readonly db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.db = db;
  }
  read(): ChangedRead {
    const read = runToEnd(readStepsInTransaction(this.db, readBfeChangedSteps(this.db, this.base, this.last)));
    this.last = read.input;
    const clean = read.position !== undefined && read.problems.length === 0;
    this.base = clean ? { input: read.input, position: read.position! } : undefined;
    return read;
  }
  /** Reads and checks the result against a whole read of the same commit. */
  check(): ChangedRead {
    const read = this.read();
    const whole = fresh(this.db);
    expect(read.input).toStrictEqual(whole.input);
    expect(JSON.stringify(read.input)).toBe(JSON.stringify(whole.input));
    expect(read.problems).toEqual(whole.problems);
    return read;
  }
}

function seed(products: number, clusters: number): string {
  const sql: string[] = ["INSERT INTO meta VALUES ('defaultProduct', 'p0');"];
  sql.push("INSERT INTO conditions VALUES ('any', 'default_t()');");
  for (let p = 0; p < products; p++) {
    sql.push(`INSERT INTO products (name) VALUES ('p${p}');`);
    for (let h = 0; h < 3; h++) sql.push(`INSERT INTO hosts VALUES ('h${h}.p${p}.test', 'p${p}', NULL);`);
    sql.push(`INSERT INTO hosts VALUES ('t.p${p}.test', 'p${p}', 'blue');`);
    sql.push(`INSERT INTO vips VALUES ('10.0.${p}.1', 'p${p}');`);
    sql.push(`INSERT INTO basic_rules VALUES ('p${p}', 0, '["h0.p${p}.test"]', '["/a"]', 'c${p % clusters}');`);
    sql.push(`INSERT INTO advanced_rules VALUES ('p${p}', 0, 'default_t()', 'c${p % clusters}');`);
  }
  for (let c = 0; c < clusters; c++) {
    sql.push(`INSERT INTO clusters (name, retries, hash_key) VALUES ('c${c}', ${c % 3}, ${c % 2 ? "'k'" : 'NULL'});`);
    for (const s of ['s1', 's2']) {
      sql.push(`INSERT INTO subclusters VALUES ('c${c}', '${s}', 1);`);
      sql.push(`INSERT INTO backends (cluster, subcluster, address) VALUES ('c${c}', '${s}', '127.0.0.1:9001');`);
      sql.push(`INSERT INTO backends (cluster, subcluster, address) VALUES ('c${c}', '${s}', '127.0.0.2:9001');`);
    }
  }
  return sql.join('\n');
}

/** Deletes the rows whose product, cluster or sub-cluster does not exist, and clears bad JSON. */
const REPAIR = `
DELETE FROM hosts WHERE product NOT IN (SELECT name FROM products);
DELETE FROM vips WHERE product NOT IN (SELECT name FROM products);
DELETE FROM basic_rules WHERE product NOT IN (SELECT name FROM products);
DELETE FROM advanced_rules WHERE product NOT IN (SELECT name FROM products);
DELETE FROM subclusters WHERE cluster NOT IN (SELECT name FROM clusters);
DELETE FROM backends WHERE (cluster, subcluster) NOT IN (SELECT cluster, name FROM subclusters);
UPDATE basic_rules SET paths = NULL WHERE paths = 'not json';
UPDATE clusters SET health_check = NULL WHERE health_check = 'bad';
`;

describe('sqlite read: only what the change log names', () => {
  it('reads only the written products and clusters, keeping every other object', async () => {
    await withDb((w, r) => {
      w.exec(seed(20, 10));
      const reader = new Reader(r);
      const first = reader.check();
      expect(first.partial).toBe(false);
      expect(first.position).toBeDefined();
      w.exec("UPDATE backends SET address = '127.0.0.9:9001' WHERE cluster = 'c4' AND address = '127.0.0.1:9001'");
      const second = reader.check();
      expect(second.partial).toBe(true);
      const [before, after] = [first.input as Json, second.input as Json];
      expect(after.products).toBe(before.products);
      expect(after.conditions).toBe(before.conditions);
      const [bc, ac] = [before.clusters as Json, after.clusters as Json];
      for (const name of Object.keys(bc)) {
        if (name === 'c4') expect(ac[name]).not.toBe(bc[name]);
        else expect(ac[name]).toBe(bc[name]);
      }
      // A commit that touches no routing table (data_version moves): the same objects.
      w.exec("INSERT INTO servers (host, backends) VALUES ('x.test', '[]')");
      const third = reader.check();
      expect(third.partial).toBe(true);
      expect((third.input as Json).clusters).toBe(ac);
    });
  });

  it('equals a whole read after random edits of every table from another connection', async () => {
    const random = seededRandom(11);
    const pick = (n: number) => Math.floor(random() * n);
    const p = () => `p${pick(24)}`;
    const c = () => `c${pick(12)}`;
    const edits = [
      () => `DELETE FROM hosts WHERE host = 'h${pick(3)}.${p()}.test'`,
      () => `INSERT OR IGNORE INTO hosts VALUES ('h${pick(5)}.${p()}.test', '${p()}', NULL)`,
      () => `INSERT OR IGNORE INTO hosts VALUES ('a${pick(5)}.${p()}.test', '${p()}', '${pick(2) ? 'blue' : '1'}')`,
      // REPLACE moves the host to another product (the old row is deleted without a delete trigger).
      () => `INSERT OR REPLACE INTO hosts VALUES ('h${pick(3)}.${p()}.test', '${p()}', NULL)`,
      () => `UPDATE OR REPLACE hosts SET host = 'h${pick(3)}.${p()}.test' WHERE host = 'h${pick(3)}.${p()}.test'`,
      () => `UPDATE hosts SET tag = ${pick(2) ? 'NULL' : "'blue'"} WHERE host = 't.${p()}.test'`,
      () => `UPDATE hosts SET product = '${p()}' WHERE host = 'h0.${p()}.test'`,
      () => `DELETE FROM vips WHERE product = '${p()}'`,
      () => `INSERT OR REPLACE INTO vips VALUES ('10.0.${pick(24)}.1', '${p()}')`,
      () => `UPDATE OR REPLACE vips SET vip = '10.0.${pick(24)}.1' WHERE vip = '10.0.${pick(24)}.1'`,
      () => `UPDATE basic_rules SET paths = '${pick(4) ? '["/b"]' : 'not json'}' WHERE product = '${p()}'`,
      () => `INSERT OR REPLACE INTO basic_rules VALUES ('${p()}', ${pick(3)}, NULL, '["/x"]', '${c()}')`,
      () => `DELETE FROM basic_rules WHERE product = '${p()}' AND position = ${pick(3)}`,
      () => `INSERT OR IGNORE INTO advanced_rules VALUES ('${p()}', ${pick(3)}, 'default_t()', '${c()}')`,
      () => `UPDATE advanced_rules SET cond = 'req_host_in("x")' WHERE product = '${p()}'`,
      () => `UPDATE OR IGNORE advanced_rules SET product = '${p()}' WHERE product = '${p()}'`,
      () => `INSERT OR IGNORE INTO hosts VALUES ('x${pick(9)}.test', 'gone${pick(2)}', NULL)`,
      () => `DELETE FROM hosts WHERE product LIKE 'gone%'`,
      () => `DELETE FROM products WHERE name = '${p()}'`,
      () => `INSERT OR IGNORE INTO products (name) VALUES ('${p()}')`,
      () => `UPDATE OR IGNORE products SET name = '${p()}' WHERE name = '${p()}'`,
      () => `INSERT OR IGNORE INTO products (name) VALUES ('${pick(30)}')`,
      () => `UPDATE OR IGNORE backends SET address = '10.1.1.${pick(3)}:80' WHERE cluster = '${c()}' AND rowid % 3 = 0`,
      () => `DELETE FROM backends WHERE cluster = '${c()}' AND subcluster = 's${pick(3)}'`,
      () =>
        `INSERT OR REPLACE INTO backends (cluster, subcluster, address, name) VALUES ('${c()}', 's${pick(3)}', '127.0.0.${pick(3)}:9001', 'n')`,
      () => `UPDATE OR REPLACE backends SET cluster = '${c()}' WHERE cluster = '${c()}' AND rowid % 2 = 0`,
      () => `UPDATE subclusters SET weight = ${pick(3)} WHERE cluster = '${c()}'`,
      () => `DELETE FROM subclusters WHERE cluster = '${c()}' AND name = 's${pick(3)}'`,
      () => `INSERT OR IGNORE INTO subclusters VALUES ('${c()}', 's${pick(3)}', 1)`,
      () => `UPDATE clusters SET retries = ${pick(3)}, balance = ${pick(2) ? "'wrr'" : 'NULL'} WHERE name = '${c()}'`,
      () => `UPDATE clusters SET health_check = '${pick(4) ? '{"path":"/h"}' : 'bad'}' WHERE name = '${c()}'`,
      () => `UPDATE clusters SET hash_strategy = ${pick(2) ? "'header'" : 'NULL'} WHERE name = '${c()}'`,
      () => `DELETE FROM clusters WHERE name = '${c()}'`,
      () => `INSERT OR IGNORE INTO clusters (name) VALUES ('${c()}')`,
      () => `UPDATE OR IGNORE clusters SET name = '${c()}' WHERE name = '${c()}'`,
      () => `INSERT OR REPLACE INTO conditions VALUES ('k${pick(3)}', 'default_t()')`,
      () => `DELETE FROM conditions WHERE name = 'k${pick(3)}'`,
      () => `INSERT OR REPLACE INTO meta VALUES ('defaultProduct', '${p()}')`,
      () => `DELETE FROM meta WHERE key = 'defaultProduct'`,
    ];
    await withDb((w, r) => {
      w.exec(seed(20, 10));
      const reader = new Reader(r);
      reader.check();
      const counts = { partial: 0, whole: 0, problems: 0, keptProducts: 0, keptClusters: 0 };
      for (let round = 0; round < 300; round++) {
        // Rows left without their product or cluster (and bad JSON) keep every read whole: repair them most of the time.
        if (reader.base === undefined && pick(3) > 0) w.exec(REPAIR);
        const before = reader.last as Json;
        // Several edits, sometimes in one transaction.
        const batch = Array.from({ length: 1 + pick(3) }, () => edits[pick(edits.length)]!());
        if (pick(2)) w.exec(`BEGIN; ${batch.join('; ')}; COMMIT`);
        else for (const sql of batch) w.exec(sql);
        const wasClean = reader.base !== undefined;
        const read = reader.check();
        expect(read.partial).toBe(wasClean && read.problems.length === 0);
        if (read.partial) counts.partial++;
        else counts.whole++;
        if (read.problems.length > 0) counts.problems++;
        const [bp, ap] = [before.products as Json, (read.input as Json).products as Json];
        const [bc, ac] = [before.clusters as Json, (read.input as Json).clusters as Json];
        for (const name of Object.keys(ap)) if (ap[name] === bp[name]) counts.keptProducts++;
        for (const name of Object.keys(ac)) if (ac[name] === bc[name]) counts.keptClusters++;
      }
      expect(counts.partial).toBeGreaterThan(100);
      expect(counts.problems).toBeGreaterThan(0);
      expect(counts.keptProducts).toBeGreaterThan(0);
      expect(counts.keptClusters).toBeGreaterThan(0);
    });
  });

  it('reads every table when the log cannot tell what changed', async () => {
    await withDb((w, r) => {
      w.exec(seed(5, 3));
      const reader = new Reader(r);
      expect(reader.check().partial).toBe(false); // first read
      w.exec("UPDATE backends SET weight = 2 WHERE cluster = 'c1'");
      expect(reader.check().partial).toBe(true);
      // Entries deleted (by hand, or trimmed): fewer than the revisions say.
      w.exec("UPDATE backends SET weight = 3 WHERE cluster = 'c1'; UPDATE hosts SET tag = 'x' WHERE product = 'p2'");
      w.exec('DELETE FROM change_log WHERE rev = (SELECT max(rev) FROM change_log)');
      expect(reader.check().partial).toBe(false);
      w.exec("UPDATE backends SET weight = 4 WHERE cluster = 'c1'");
      expect(reader.check().partial).toBe(true);
      // A bulk write: more entries than MAX_ENTRIES.
      w.exec('BEGIN');
      for (let i = 0; i <= MAX_ENTRIES; i++) w.exec(`UPDATE backends SET weight = ${i} WHERE rowid = 1`);
      w.exec('COMMIT');
      expect(reader.check().partial).toBe(false);
      // A dropped trigger: writes are no longer all logged, so every read is whole.
      w.exec('DROP TRIGGER change_log_hosts_update');
      w.exec("UPDATE hosts SET tag = 'y' WHERE product = 'p3'");
      const dropped = reader.check();
      expect([dropped.partial, dropped.position]).toEqual([false, undefined]);
      w.exec("UPDATE hosts SET tag = 'z' WHERE product = 'p3'");
      expect(reader.check().partial).toBe(false);
      // The migration puts it back; the schema changed, so the next read is whole, then partial.
      initDatabase(w);
      w.exec("UPDATE hosts SET tag = 'w' WHERE product = 'p3'");
      expect(reader.check().partial).toBe(false);
      w.exec("UPDATE hosts SET tag = 'v' WHERE product = 'p3'");
      expect(reader.check().partial).toBe(true);
      // The log emptied and re-created: its revision starts again.
      w.exec('DROP TABLE change_log');
      initDatabase(w);
      w.exec("UPDATE hosts SET tag = 'u' WHERE product = 'p3'");
      expect(reader.check().partial).toBe(false);
      // A bad row: the read is whole (problems as a whole read gives them), and so is the next.
      w.exec("INSERT INTO hosts VALUES ('orphan.test', 'nope', NULL)");
      const bad = reader.check();
      expect(bad.partial).toBe(false);
      expect(bad.problems).toEqual(['hosts(host=orphan.test): product nope does not exist']);
      w.exec("DELETE FROM hosts WHERE host = 'orphan.test'");
      expect(reader.check().partial).toBe(false);
      w.exec("UPDATE hosts SET tag = 't' WHERE product = 'p3'");
      expect(reader.check().partial).toBe(true);
    });
  });

  it('migrates a schema-version-1 file: whole reads before, partial reads after `initDatabase`', async () => {
    const v1 = SCHEMA_SQL.slice(0, SCHEMA_SQL.indexOf('CREATE INDEX IF NOT EXISTS hosts_by_product'));
    await withDb(
      (w, r) => {
        w.exec(seed(5, 3));
        const reader = new Reader(r);
        const first = reader.check();
        expect([first.partial, first.position]).toEqual([false, undefined]);
        w.exec("UPDATE backends SET weight = 2 WHERE cluster = 'c1'");
        expect(reader.check().partial).toBe(false);
        initDatabase(w);
        expect(w.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({ value: '2' });
        w.exec("UPDATE backends SET weight = 3 WHERE cluster = 'c1'");
        expect(reader.check().partial).toBe(false);
        w.exec("UPDATE backends SET weight = 4 WHERE cluster = 'c1'");
        expect(reader.check().partial).toBe(true);
      },
      (w) => {
        w.exec('PRAGMA journal_mode = WAL');
        w.exec(v1);
        w.exec("INSERT INTO meta VALUES ('schema', '1')");
      },
    );
  });

  it.skipIf(!hasSqlite3())('the book sees a write made by the sqlite3 shell', async () => {
    await withDb(async (w, _r, file) => {
      w.exec(seed(3, 3));
      const dir = join(file, '..');
      const context = {
        configDir: dir,
        registry: new LocalRegistry(),
        logger: pino({ level: 'silent' }),
        random: seededRandom(1),
      };
      const book = sqliteAddressBook.create(
        sqliteAddressBook.options.parse({ path: 'routes.db', pollInterval: 3_600_000 }),
        context,
      );
      await book.start();
      const backends = () =>
        book.findAddresses(requestFor('h1.p1.test'))?.subclusters.flatMap((s) => s.backends.map((b) => b.id));
      expect(backends()).toEqual(['127.0.0.1:9001', '127.0.0.2:9001', '127.0.0.1:9001', '127.0.0.2:9001']);
      execFileSync('sqlite3', [
        file,
        "UPDATE backends SET address = '127.0.0.7:9001' WHERE cluster = 'c1' AND address = '127.0.0.1:9001' AND subcluster = 's1'",
      ]);
      expect(await book.poll()).toBe(true);
      expect(backends()).toEqual(['127.0.0.7:9001', '127.0.0.2:9001', '127.0.0.1:9001', '127.0.0.2:9001']);
      execFileSync('sqlite3', [file, "INSERT OR REPLACE INTO hosts VALUES ('h1.p1.test', 'p2', NULL)"]);
      expect(await book.poll()).toBe(true);
      expect(book.findAddresses(requestFor('h1.p1.test'))?.subclusters[0]?.backends[0]?.id).toBe('127.0.0.1:9001');
      await book.close();
    });
  });
});

function hasSqlite3(): boolean {
  try {
    execFileSync('sqlite3', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
