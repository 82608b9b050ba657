/**
 * The sqlite book's read keeps the previous read's objects for unchanged rows
 * (address-books/sqlite/reuse-rows.ts): unchanged products are the previous objects (identity),
 * changed ones are fresh, and the input always equals a read without `previous` (same keys in
 * the same order, same problems), over random edits of every products-side table.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../address-books/lib/sliced.ts';
import { readBfeSteps, readStepsInTransaction } from '../../address-books/sqlite/read.ts';
import { dbInit } from '../../cli/db.ts';
import { seededRandom } from '../../src/random.ts';
import { tempDir } from '../harness/router.ts';

type Json = Record<string, unknown>;

function read(db: DatabaseSync, previous?: unknown) {
  return runToEnd(readStepsInTransaction(db, readBfeSteps(db, false, previous)));
}

async function withDb(rows: string, body: (db: DatabaseSync) => void): Promise<void> {
  const dir = await tempDir();
  const file = join(dir, 'routes.db');
  dbInit(file);
  const db = new DatabaseSync(file);
  try {
    db.exec(rows);
    body(db);
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function seed(products: number): string {
  const sql: string[] = [];
  for (let p = 0; p < products; p++) {
    sql.push(`INSERT INTO products (name) VALUES ('p${p}');`);
    for (let h = 0; h < 3; h++) sql.push(`INSERT INTO hosts VALUES ('h${h}.p${p}.test', 'p${p}', NULL);`);
    sql.push(`INSERT INTO hosts VALUES ('t.p${p}.test', 'p${p}', 'blue');`);
    sql.push(`INSERT INTO vips VALUES ('10.0.${p}.1', 'p${p}');`);
    sql.push(`INSERT INTO basic_rules VALUES ('p${p}', 0, '["h0.p${p}.test"]', '["/a"]', 'c');`);
    sql.push(`INSERT INTO advanced_rules VALUES ('p${p}', 0, 'default_t()', 'c');`);
  }
  sql.push("INSERT INTO clusters (name) VALUES ('c'); INSERT INTO subclusters VALUES ('c', 's', 1);");
  sql.push("INSERT INTO backends (cluster, subcluster, address) VALUES ('c', 's', '127.0.0.1:9001');");
  return sql.join('\n');
}

describe('sqlite read: the previous read’s objects for unchanged rows', () => {
  it('keeps unchanged products by identity and builds the changed one fresh', async () => {
    await withDb(seed(20), (db) => {
      const first = read(db);
      const products = (first.input as Json).products as Json;
      db.exec("UPDATE hosts SET host = 'moved.p3.test' WHERE host = 'h1.p3.test'");
      const second = read(db, first.input);
      const next = (second.input as Json).products as Json;
      expect(second.input).toStrictEqual(read(db).input);
      expect(Object.keys(next)).toEqual(Object.keys(products));
      for (const name of Object.keys(products)) {
        if (name === 'p3') expect(next[name]).not.toBe(products[name]);
        else expect(next[name]).toBe(products[name]);
      }
      // Within the changed product, the lists whose rows did not change are kept too.
      expect((next.p3 as Json).rules).toBe((products.p3 as Json).rules);
      expect((next.p3 as Json).hostTags).toBe((products.p3 as Json).hostTags);
    });
  });

  it('equals a read without previous after random edits (keys, order, problems)', async () => {
    const random = seededRandom(7);
    const pick = (n: number) => Math.floor(random() * n);
    const edits = [
      (p: number) => `DELETE FROM hosts WHERE host = 'h${pick(3)}.p${p}.test'`,
      (p: number) => `INSERT OR IGNORE INTO hosts VALUES ('h${pick(5)}.p${p}.test', 'p${p}', NULL)`,
      (p: number) =>
        `INSERT OR IGNORE INTO hosts VALUES ('a${pick(5)}.p${p}.test', 'p${p}', '${pick(2) ? 'blue' : '1'}')`,
      (p: number) => `UPDATE hosts SET tag = NULL WHERE host = 't.p${p}.test'`,
      (p: number) => `UPDATE hosts SET product = 'p${pick(20)}' WHERE host = 'h0.p${p}.test'`,
      (p: number) => `DELETE FROM vips WHERE product = 'p${p}'`,
      (p: number) => `UPDATE basic_rules SET paths = '${pick(2) ? '["/b"]' : 'not json'}' WHERE product = 'p${p}'`,
      (p: number) => `INSERT OR IGNORE INTO advanced_rules VALUES ('p${p}', ${pick(3)}, 'default_t()', 'c')`,
      (p: number) => `UPDATE advanced_rules SET cond = 'req_host_in("x")' WHERE product = 'p${p}'`,
      (_p: number) => `INSERT OR IGNORE INTO hosts VALUES ('x${pick(9)}.test', 'gone${pick(2)}', NULL)`,
      (p: number) => `DELETE FROM products WHERE name = 'p${p}'`,
      (p: number) => `INSERT OR IGNORE INTO products (name) VALUES ('p${p}')`,
    ];
    await withDb(seed(20), (db) => {
      db.exec('PRAGMA foreign_keys = OFF');
      let previous = read(db).input;
      let kept = 0;
      let withProblems = 0;
      for (let round = 0; round < 150; round++) {
        for (let n = pick(3); n >= 0; n--) db.exec(edits[pick(edits.length)]!(pick(20)));
        const again = read(db, previous);
        const fresh = read(db);
        expect(again.input).toStrictEqual(fresh.input);
        expect(JSON.stringify(again.input)).toBe(JSON.stringify(fresh.input));
        expect(again.problems).toEqual(fresh.problems);
        if (fresh.problems.length > 0) withProblems++;
        const before = (previous as Json).products as Json;
        for (const [name, p] of Object.entries((again.input as Json).products as Json)) if (p === before[name]) kept++;
        previous = again.input;
      }
      expect(kept).toBeGreaterThan(0);
      expect(withProblems).toBeGreaterThan(0);
    });
  });
});
