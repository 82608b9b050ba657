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
import { dbInit } from '../../address-books/sqlite/store.ts';
import { seededRandom } from '../../src/base/random.ts';
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
  for (let c = 0; c < 10; c++) {
    sql.push(`INSERT INTO clusters (name, retries, hash_key) VALUES ('c${c}', ${c % 3}, ${c % 2 ? "'k'" : 'NULL'});`);
    for (const s of ['s1', 's2']) {
      sql.push(`INSERT INTO subclusters VALUES ('c${c}', '${s}', 1);`);
      sql.push(`INSERT INTO backends (cluster, subcluster, address) VALUES ('c${c}', '${s}', '127.0.0.1:9001');`);
      sql.push(`INSERT INTO backends (cluster, subcluster, address) VALUES ('c${c}', '${s}', '127.0.0.2:9001');`);
    }
  }
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
      const clusters = (first.input as Json).clusters as Json;
      db.exec(
        "UPDATE backends SET address = '127.0.0.3:9001' WHERE cluster = 'c4' AND subcluster = 's2' AND address = '127.0.0.2:9001'",
      );
      const third = read(db, second.input);
      expect(third.input).toStrictEqual(read(db).input);
      const nextClusters = (third.input as Json).clusters as Json;
      for (const name of Object.keys(clusters)) {
        if (name === 'c4') expect(nextClusters[name]).not.toBe(clusters[name]);
        else expect(nextClusters[name]).toBe(clusters[name]);
      }
      const sub = (c: unknown, s: string) => ((c as Json).subclusters as Json)[s];
      expect(sub(nextClusters.c4, 's1')).toBe(sub(clusters.c4, 's1'));
      expect(sub(nextClusters.c4, 's2')).not.toBe(sub(clusters.c4, 's2'));
      expect(((third.input as Json).products as Json).p3).toBe(next.p3);
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
      (p: number) =>
        `UPDATE OR IGNORE backends SET address = '10.1.1.${pick(3)}:80' WHERE cluster = 'c${p % 12}' AND rowid % 3 = 0`,
      (p: number) => `DELETE FROM backends WHERE cluster = 'c${p % 12}' AND subcluster = 's${pick(3)}'`,
      (p: number) =>
        `INSERT OR IGNORE INTO backends (cluster, subcluster, address, name) VALUES ('c${p % 12}', 's${pick(3)}', 'x:1', 'n')`,
      (p: number) => `UPDATE subclusters SET weight = ${pick(3)} WHERE cluster = 'c${p % 12}'`,
      (p: number) => `DELETE FROM subclusters WHERE cluster = 'c${p % 12}' AND name = 's${pick(3)}'`,
      (p: number) => `INSERT OR IGNORE INTO subclusters VALUES ('c${p % 12}', 's${pick(3)}', 1)`,
      (p: number) =>
        `UPDATE clusters SET retries = ${pick(3)}, balance = ${pick(2) ? "'wrr'" : 'NULL'} WHERE name = 'c${p % 12}'`,
      (p: number) =>
        `UPDATE clusters SET health_check = '${pick(2) ? '{"path":"/h"}' : 'bad'}' WHERE name = 'c${p % 12}'`,
      (p: number) => `UPDATE clusters SET hash_strategy = ${pick(2) ? "'header'" : 'NULL'} WHERE name = 'c${p % 12}'`,
      (p: number) => `DELETE FROM clusters WHERE name = 'c${p % 12}'`,
      (p: number) => `INSERT OR IGNORE INTO clusters (name) VALUES ('c${p % 12}')`,
    ];
    await withDb(seed(20), (db) => {
      db.exec('PRAGMA foreign_keys = OFF');
      let previous = read(db).input;
      let kept = 0;
      let withProblems = 0;
      let keptClusters = 0;
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
        const beforeClusters = (previous as Json).clusters as Json;
        for (const [name, c] of Object.entries((again.input as Json).clusters as Json)) {
          if (c === beforeClusters[name]) keptClusters++;
        }
        previous = again.input;
      }
      expect(kept).toBeGreaterThan(0);
      expect(keptClusters).toBeGreaterThan(0);
      expect(withProblems).toBeGreaterThan(0);
    });
  });
});
