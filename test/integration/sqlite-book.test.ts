/**
 * The sqlite book end to end: `db init` + `db import`, the real router (net panel) on port 0,
 * real backends, and updates committed by a second connection while traffic flows.
 */
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteAddressBook } from '../../address-books/sqlite/book.ts';
import { dbImport, dbInit } from '../../address-books/sqlite/store.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

function get(port: number, host: string, path = '/'): Promise<{ status: number; backend: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', path, headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, backend: res.headers['x-backend'] as string }));
    });
    req.on('error', reject);
    req.end();
  });
}

function write(file: string, sql: string): void {
  const db = new DatabaseSync(file, { timeout: 5000 });
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

describe('sqlite book through the net panel', () => {
  let a: TestBackend;
  let b: TestBackend;
  let c: TestBackend;
  let router: TestRouter;
  let file: string;

  beforeAll(async () => {
    [a, b, c] = await Promise.all([startHttpBackend('a'), startHttpBackend('b'), startHttpBackend('c')]);
    const dir = await tempDir({
      'routes.yaml': [
        'products:',
        '  shop: { hosts: [shop.test], rules: [{ cond: "default_t()", cluster: web }] }',
        '  api: { hosts: [api.test], rules: [{ cond: "default_t()", cluster: api }] }',
        'clusters:',
        `  web: { subclusters: { s1: { weight: 1, backends: [{ address: "${a.address}" }] } } }`,
        `  api: { subclusters: { s1: { weight: 1, backends: [{ address: "${c.address}" }] } } }`,
      ].join('\n'),
    });
    file = join(dir, 'routes.db');
    dbInit(file);
    await dbImport(file, join(dir, 'routes.yaml'));
    router = await startTestRouter(
      { operator: 'round-robin', addressBook: { name: 'sqlite', path: 'routes.db', pollInterval: '50ms' } },
      { dir },
    );
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('routes by the imported rows', async () => {
    expect(await get(router.port(), 'shop.test')).toEqual({ status: 200, backend: 'a' });
    expect(await get(router.port(), 'api.test')).toEqual({ status: 200, backend: 'c' });
    expect((await get(router.port(), 'nowhere.test')).status).toBe(404);
  });

  it('applies a backend row update while traffic flows, with no failed request', async () => {
    const statuses: number[] = [];
    const seen = new Set<string>();
    let stop = false;
    const traffic = (async () => {
      while (!stop) {
        const r = await get(router.port(), 'shop.test');
        statuses.push(r.status);
        if (r.backend !== undefined) seen.add(r.backend);
      }
    })();
    await eventually(() => statuses.length >= 20, 10_000, 'traffic before the update');
    write(file, `UPDATE backends SET address = '${b.address}' WHERE cluster = 'web'`);
    await eventually(() => seen.has('b'), 10_000, 'backend b to receive traffic');
    const after = statuses.length;
    await eventually(() => statuses.length >= after + 20, 10_000, 'traffic after the update');
    stop = true;
    await traffic;
    expect(statuses.every((s) => s === 200)).toBe(true);
    // Once b is live, every later request goes to b (a is gone from the snapshot).
    const last = await get(router.port(), 'shop.test');
    expect(last.backend).toBe('b');
  });

  it('rejects a bad row and keeps serving the old routes', async () => {
    const version = router.router.runtime.engine.book.version;
    write(file, `UPDATE backends SET address = 'not-an-address' WHERE cluster = 'api'`);
    const book = router.router.runtime.engine.book as SqliteAddressBook;
    await eventually(() => book.lastError !== undefined, 10_000, 'the bad row to be reported');
    expect(book.lastError).toContain(`backends(cluster=api, subcluster=s1, address=not-an-address).address`);
    expect(router.router.runtime.engine.book.version).toBe(version);
    expect(await get(router.port(), 'api.test')).toEqual({ status: 200, backend: 'c' });
    write(file, `UPDATE backends SET address = '${c.address}' WHERE cluster = 'api'`);
    await eventually(() => router.router.runtime.engine.book.version > version, 10_000, 'the fixed rows to load');
    expect(await get(router.port(), 'api.test')).toEqual({ status: 200, backend: 'c' });
  });

  it('keeps registry state of backends that stay across updates (registry keyed by address)', async () => {
    const registry = router.router.runtime.registry;
    await get(router.port(), 'api.test');
    const before = registry.peek(c.address)?.total ?? 0;
    expect(before).toBeGreaterThan(0);
    const version = router.router.runtime.engine.book.version;
    // Add a second backend to api's sub-cluster and move web back to a: c stays.
    write(
      file,
      `BEGIN; INSERT INTO backends (cluster, subcluster, address) VALUES ('api', 's1', '${a.address}');
       UPDATE backends SET address = '${a.address}' WHERE cluster = 'web'; COMMIT;`,
    );
    await eventually(() => router.router.runtime.engine.book.version > version, 10_000, 'the update to load');
    expect(registry.peek(c.address)?.total).toBe(before);
    expect(registry.has(b.address)).toBe(false);
  });
});
