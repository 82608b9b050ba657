/**
 * The example PostgreSQL address book (examples/pg-address-book) loaded by path from config,
 * against a real PostgreSQL started by the test: it passes the address-book conformance suite
 * and applies NOTIFY-driven updates while the router serves traffic.
 */
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pgBook from '../../examples/pg-address-book/book.ts';
import { seededRandom } from '../../src/base/random.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { addressBookConformance } from '../conformance/address-book.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { postgresBin, startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';

const HAVE_PG = postgresBin() !== undefined;
const EXAMPLE = join(import.meta.dirname, '../../examples/pg-address-book');
let server: TestPostgres;
let db: pg.Client;
let tables = 0;

async function createTable(name: string): Promise<void> {
  const sql = (await readFile(join(EXAMPLE, 'schema.sql'), 'utf8')).replaceAll('switchboard_backends', name);
  await db.query(sql);
}

if (HAVE_PG) {
  beforeAll(async () => {
    server = await startPostgres();
    db = new pg.Client({ connectionString: server.url });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await server?.close();
  });
  addressBookConformance('pg example', async () => {
    const table = `conf_${++tables}`;
    await createTable(table);
    await db.query(`INSERT INTO ${table} (host, address) VALUES ('a.test', '127.0.0.1:9001')`);
    const options = pgBook.options.parse({ connectionString: server.url, table });
    return {
      book: pgBook.create(options, {
        configDir: '/',
        registry: new LocalRegistry(),
        logger: pino({ level: 'silent' }),
        random: seededRandom(1),
      }),
      update: async () => void (await db.query(`UPDATE ${table} SET address = '127.0.0.1:9002'`)),
      breakSource: async () => void (await db.query(`UPDATE ${table} SET address = 'nope'`)),
      cleanup: async () => void (await db.query(`DROP TABLE ${table}`)),
    };
  });
} else {
  describe.skip('pg example: postgresql is not installed (apt-get install postgresql)', () => {
    it('skipped', () => undefined);
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

describe.skipIf(!HAVE_PG)('pg example through the router', () => {
  let a: TestBackend;
  let b: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    [a, b] = await Promise.all([startHttpBackend('a'), startHttpBackend('b')]);
    await createTable('switchboard_backends');
    await db.query(`INSERT INTO switchboard_backends (host, address) VALUES ('shop.test', $1)`, [a.address]);
    router = await startTestRouter({
      operator: 'round-robin',
      addressBook: { name: join(EXAMPLE, 'book.ts'), connectionString: server.url },
    });
  });
  afterAll(async () => {
    await router?.close();
    await Promise.all([a?.close(), b?.close()]);
  });

  it('routes from the table, and a NOTIFY-driven update moves traffic with no failed request', async () => {
    expect(await get(router.port(), 'shop.test')).toEqual({ status: 200, backend: 'a' });
    expect((await get(router.port(), 'other.test')).status).toBe(404);
    const statuses: number[] = [];
    let stop = false;
    let sawB = false;
    const traffic = (async () => {
      while (!stop) {
        const r = await get(router.port(), 'shop.test');
        statuses.push(r.status);
        if (r.backend === 'b') sawB = true;
      }
    })();
    await eventually(() => statuses.length >= 10, 10_000, 'traffic before the update');
    await db.query(`UPDATE switchboard_backends SET address = $1 WHERE host = 'shop.test'`, [b.address]);
    await eventually(() => sawB, 10_000, 'the NOTIFY-driven update');
    stop = true;
    await traffic;
    expect(statuses.every((s) => s === 200)).toBe(true);
  });
});
