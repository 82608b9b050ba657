/**
 * Say when routes change (issue 45 item 6): a good change of the `file`, `sqlite` and `etcd`
 * books logs `routes updated` with the book's own version (a file's hash, the SQLite change
 * log's revision, the etcd revision) and counts, what changed at debug, and shows the version
 * in GET /routes and /metrics; a reload that rebuilds the same routes says nothing. The real
 * router on port 0, real backends and requests, a real etcd when installed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteAddressBook } from '../../address-books/sqlite/book.ts';
import { dbImport, dbInit } from '../../address-books/sqlite/store.ts';
import { createLogger } from '../../src/base/log.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { etcdBinary, startEtcd, type TestEtcd } from '../harness/etcd.ts';
import { httpGet } from '../harness/http.ts';
import { eventually, startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

type Line = Record<string, unknown> & { msg: string };

/** A debug logger whose JSON lines collect in `lines`. */
function capture() {
  const lines: Line[] = [];
  const logger = createLogger('debug', { write: (l: string) => lines.push(JSON.parse(l) as Line) });
  return { lines, logger };
}

const TOKEN = { authorization: 'Bearer t0ken' };

async function adminGet(router: TestRouter, path: string): Promise<string> {
  const port = router.router.admin!.address().port;
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: TOKEN });
  expect(res.status).toBe(200);
  return res.text();
}

/** The backend that answered a request for `host` (the harness backends name themselves). */
async function backendFor(router: TestRouter, host: string): Promise<string | undefined> {
  const r = await httpGet(router.port(), '/', { host });
  return r.headers['x-backend'] as string | undefined;
}

function updates(lines: Line[]): Line[] {
  return lines.filter((l) => l.msg === 'routes updated');
}

describe('file book: routes updated', () => {
  let a: TestBackend;
  let b: TestBackend;
  let router: TestRouter;
  const { lines, logger } = capture();
  const servers = (hosts: [string, TestBackend][]) =>
    hosts.map(([h, be]) => `- { host: ${h}, backends: ["${be.address}"] }`).join('\n');

  beforeAll(async () => {
    [a, b] = await Promise.all([startHttpBackend('a'), startHttpBackend('b')]);
    const dir = await tempDir({ 'servers.yaml': servers([['a.test', a]]) });
    router = await startTestRouter(
      {
        addressBook: { name: 'file', path: 'servers.yaml' },
        admin: { address: '127.0.0.1:0', token: 't0ken' },
      },
      { dir, runtime: { logger } },
    );
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([a.close(), b.close()]);
  });

  it('logs the first routes, then a change with its new hash and counts, what changed at debug, in /routes and /metrics', async () => {
    const file = join(router.dir, 'servers.yaml');
    const loaded = lines.find((l) => l.msg === 'routes loaded');
    expect(loaded).toMatchObject({ level: 'info', book: 'file', source: file, hosts: 1, clusters: 1, backends: 1 });
    expect(loaded?.version).toMatch(/^sha256:[0-9a-f]{12}$/);
    expect(loaded?.changedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    await writeFile(
      file,
      servers([
        ['a.test', a],
        ['b.test', b],
      ]),
    );
    await eventually(() => updates(lines).length === 1, 10_000, 'routes updated');
    const updated = updates(lines)[0]!;
    expect(updated).toMatchObject({ level: 'info', book: 'file', source: file, hosts: 2, clusters: 2, backends: 2 });
    expect(updated.version).toMatch(/^sha256:/);
    expect(updated.version).not.toBe(loaded?.version);
    const changed = lines.find((l) => l.msg === 'routes changed');
    expect(changed).toMatchObject({ level: 'debug', hostsAdded: ['b.test'], backendsAdded: [b.address] });
    expect(changed).not.toHaveProperty('hostsRemoved');
    expect(await backendFor(router, 'b.test')).toBe('b');

    const routes = JSON.parse(await adminGet(router, '/routes'));
    expect(routes.book).toMatchObject({ book: 'file', source: file, version: updated.version, hosts: 2, updates: 1 });
    const metrics = await adminGet(router, '/metrics');
    expect(metrics).toContain(
      `switchboard_routes_version_info{book="file",source="${file}",version="${String(updated.version)}"} 1`,
    );
    expect(metrics).toContain(`switchboard_routes_updates_total{book="file",source="${file}"} 1`);
    expect(metrics).toContain(`switchboard_routes{book="file",source="${file}",kind="backends"} 2`);
  });

  it('says nothing when a reload rebuilds the same routes', async () => {
    const before = updates(lines).length;
    const result = await router.router.reload();
    expect(result.ok).toBe(true);
    expect(updates(lines)).toHaveLength(before);
  });
});

describe('sqlite book: routes updated', () => {
  let a: TestBackend;
  let b: TestBackend;
  let router: TestRouter;
  let file: string;
  const { lines, logger } = capture();

  beforeAll(async () => {
    [a, b] = await Promise.all([startHttpBackend('a'), startHttpBackend('b')]);
    const dir = await tempDir({
      'routes.yaml': [
        'products:',
        '  shop: { hosts: [shop.test], rules: [{ cond: "default_t()", cluster: web }] }',
        'clusters:',
        `  web: { subclusters: { s1: { weight: 1, backends: [{ address: "${a.address}" }] } } }`,
      ].join('\n'),
    });
    file = join(dir, 'routes.db');
    dbInit(file);
    await dbImport(file, join(dir, 'routes.yaml'));
    router = await startTestRouter(
      { addressBook: { name: 'sqlite', path: 'routes.db', pollInterval: '50ms' } },
      { dir, runtime: { logger } },
    );
  });
  afterAll(async () => {
    await router.close();
    await Promise.all([a.close(), b.close()]);
  });

  it("logs a committed change with the change log's revision and what changed", async () => {
    const loaded = lines.find((l) => l.msg === 'routes loaded');
    expect(loaded).toMatchObject({ book: 'sqlite', source: file, hosts: 1, products: 1, clusters: 1, backends: 1 });
    const first = Number(/^change (\d+)$/.exec(String(loaded?.version))?.[1]);
    expect(first).toBeGreaterThan(0);

    const db = new DatabaseSync(file, { timeout: 5000 });
    db.exec(`UPDATE backends SET address = '${b.address}' WHERE cluster = 'web'`);
    db.close();
    await eventually(() => updates(lines).length === 1, 10_000, 'routes updated');
    const updated = updates(lines)[0]!;
    expect(updated).toMatchObject({ book: 'sqlite', hosts: 1, clusters: 1, backends: 1 });
    expect(Number(/^change (\d+)$/.exec(String(updated.version))?.[1])).toBeGreaterThan(first);
    expect(lines.find((l) => l.msg === 'routes changed')).toMatchObject({
      backendsAdded: [b.address],
      backendsRemoved: [a.address],
    });
    expect(await backendFor(router, 'shop.test')).toBe('b');
  });

  it('says nothing of a change the book refuses (its own warning does)', async () => {
    const before = updates(lines).length;
    const db = new DatabaseSync(file, { timeout: 5000 });
    db.exec(`UPDATE backends SET address = 'not-an-address' WHERE cluster = 'web'`);
    db.close();
    const book = router.router.runtime.engine.book as SqliteAddressBook;
    await eventually(() => book.lastError !== undefined, 10_000, 'the bad row to be refused');
    expect(updates(lines)).toHaveLength(before);
    expect(router.router.runtime.routes?.updates).toBe(before);
  });
});

const HAVE_ETCD = etcdBinary() !== undefined;

describe.skipIf(!HAVE_ETCD)('etcd book: routes updated', () => {
  let etcd: TestEtcd;
  let client: Etcd3;
  let a: TestBackend;
  let router: TestRouter;
  const { lines, logger } = capture();
  const prefix = '/routes-updated/';

  beforeAll(async () => {
    [etcd, a] = await Promise.all([startEtcd(), startHttpBackend('a')]);
    client = new Etcd3({ hosts: etcd.endpoint });
    await client
      .put(`${prefix}products/p`)
      .value(JSON.stringify({ hosts: ['a.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] }));
    await client.put(`${prefix}clusters/c`).value('subclusters: { s1: { weight: 1 } }');
    await client.put(`${prefix}backends/c/s1/${a.address}`).value('');
    router = await startTestRouter(
      { addressBook: { name: 'etcd', endpoints: etcd.endpoint, prefix, debounce: '20ms' } },
      { runtime: { logger } },
    );
  }, 30_000);
  afterAll(async () => {
    await router?.close();
    client?.close();
    await Promise.all([etcd?.close(), a?.close()]);
  });

  it('logs a watched change with its etcd revision', async () => {
    const loaded = lines.find((l) => l.msg === 'routes loaded');
    expect(loaded).toMatchObject({ book: 'etcd', source: prefix, hosts: 1, backends: 1 });
    const first = Number(/^revision (\d+)$/.exec(String(loaded?.version))?.[1]);
    const put = await client
      .put(`${prefix}products/p`)
      .value(JSON.stringify({ hosts: ['a.test', 'b.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] }));
    await eventually(() => updates(lines).length === 1, 10_000, 'routes updated');
    expect(updates(lines)[0]).toMatchObject({ book: 'etcd', hosts: 2, version: `revision ${put.header.revision}` });
    expect(Number(put.header.revision)).toBeGreaterThan(first);
    expect(lines.find((l) => l.msg === 'routes changed')).toMatchObject({ hostsAdded: ['b.test'] });
    expect(await backendFor(router, 'b.test')).toBe('a');
  });
});
