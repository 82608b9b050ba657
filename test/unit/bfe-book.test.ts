import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bfeAddressBook } from '../../address-books/bfe/book.ts';
import { seededRandom } from '../../src/base/random.ts';
import type { PluginContext } from '../../src/contracts/plugin.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { addressBookConformance, requestFor } from '../conformance/address-book.ts';
import { eventually, tempDir } from '../harness/router.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests mutate deep plain data freely
type Loose = Record<string, any>;

function context(configDir: string): PluginContext {
  return { configDir, registry: new LocalRegistry(), logger: pino({ level: 'silent' }), random: seededRandom(1) };
}

function routesYaml(port: number): string {
  return [
    'products:',
    '  p: { hosts: [a.test], basicRules: [{ hosts: [a.test], cluster: c }] }',
    'clusters:',
    `  c: { subclusters: { s1: { weight: 1, backends: [{ address: "127.0.0.1:${port}" }] } } }`,
    '',
  ].join('\n');
}

function make(options: Record<string, unknown>, dir: string) {
  return bfeAddressBook.create(bfeAddressBook.options.parse(options), context(dir));
}

addressBookConformance('bfe (routes file)', async () => {
  const dir = await tempDir({ 'routes.yaml': routesYaml(9001) });
  return {
    book: make({ routes: 'routes.yaml' }, dir),
    update: () => writeFile(join(dir, 'routes.yaml'), routesYaml(9002)),
    breakSource: () => writeFile(join(dir, 'routes.yaml'), routesYaml(9002).replace('cluster: c', 'cluster: missing')),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

addressBookConformance('bfe (BFE JSON dir)', async () => {
  const dir = await tempDir();
  const conf = join(dir, 'conf');
  await cp(join(import.meta.dirname, '../fixtures/bfe/conf'), conf, { recursive: true });
  // Route a.test to the canary cluster (only backend 127.0.0.1:9005 → 9001).
  const table = join(conf, 'cluster_conf/cluster_table.data');
  const hostRule = join(conf, 'server_data_conf/host_rule.data');
  const routeRule = join(conf, 'server_data_conf/route_rule.data');
  await writeFile(
    hostRule,
    (await readFile(hostRule, 'utf8'))
      .replace('"apiTag": [', '"apiTag": ["a.test", ')
      .replace('"DefaultProduct": "shop"', '"DefaultProduct": null'),
  );
  await writeFile(
    routeRule,
    (await readFile(routeRule, 'utf8')).replace(
      '"api": [',
      '"api": [{ "Cond": "req_host_in(\\"a.test\\")", "ClusterName": "web_canary" },',
    ),
  );
  const setPort = async (port: number) => {
    const text = await readFile(table, 'utf8');
    await writeFile(table, text.replace(/"port": \d+/, `"port": ${port}`));
  };
  await setPort(9001);
  return {
    book: make({ bfeConfDir: 'conf' }, dir),
    update: () => setPort(9002),
    breakSource: () => writeFile(table, '{ "Version": "9", "Config": '),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

/** A big table: `n` products, each with one host, a basic rule and an advanced rule. */
function bigTable(n: number): Record<string, unknown> {
  const products: Record<string, unknown> = {};
  const clusters: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    products[`p${i}`] = {
      hosts: [`h${i}.example.test`],
      basicRules: [{ hosts: [`h${i}.example.test`], paths: ['/static/*'], cluster: `c${i}` }],
      rules: [{ cond: 'default_t()', cluster: `c${i}` }],
    };
    clusters[`c${i}`] = { subclusters: { s: { weight: 1, backends: [{ address: `10.0.${i >> 8}.${i & 255}:80` }] } } };
  }
  return { products, clusters };
}

describe('bfe book', () => {
  it('serves an inline table and exposes it as the routing table', async () => {
    const book = make(routesObject(9001), '/');
    await book.start();
    expect(book.version).toBe(1);
    expect(book.findAddresses(requestFor('a.test'))?.subclusters[0]?.backends[0]?.id).toBe('127.0.0.1:9001');
    expect(book.routingTable()?.clusters.c?.retries).toBe(2);
    expect(book.explain(requestFor('a.test'))?.basic?.rule).toBe('products.p.basicRules[0]');
    await book.close();
  });

  it('rejects unknown keys and inline tables beside an external source', () => {
    expect(() => bfeAddressBook.options.parse({ colour: 'blue' })).toThrow(/colour/);
    expect(() => bfeAddressBook.options.parse({ routes: 'r.yaml', products: {} })).toThrow(
      /must be in the routes source/,
    );
    expect(() => bfeAddressBook.options.parse({ routes: 'r.yaml', bfeConfDir: 'd' })).toThrow(/not both/);
  });

  it('fails start() on a broken source, naming it', async () => {
    const dir = await tempDir({ 'routes.yaml': routesYaml(9001).replace('cluster: c', 'cluster: gone') });
    await expect(make({ routes: 'routes.yaml' }, dir).start()).rejects.toThrow(
      /routes\.yaml: products\.p\.basicRules\[0\]\.cluster: cluster gone does not exist/,
    );
    await rm(dir, { recursive: true, force: true });
  });

  it('reload atomicity: a broken rule in a big table leaves every old route working', async () => {
    const n = 2000;
    const table = bigTable(n);
    const dir = await tempDir({ 'routes.json': JSON.stringify(table) });
    const book = make({ routes: 'routes.json' }, dir);
    try {
      await book.start();
      const before = Array.from({ length: n }, (_, i) =>
        book.findAddresses(requestFor(`h${i}.example.test`, '/static/x')),
      );
      expect(before.every((c, i) => c?.cluster === `c${i}`)).toBe(true);
      // Change many routes and break one rule near the end: nothing of the change may apply.
      const broken = structuredClone(table) as { products: Loose };
      for (let i = 0; i < n; i++) broken.products[`p${i}`].basicRules[0].cluster = `c${(i + 1) % n}`;
      broken.products[`p${n - 7}`].rules[0].cond = 'req_host_in(';
      await writeFile(join(dir, 'routes.json'), JSON.stringify(broken));
      expect(await book.reload()).toBe(false);
      expect(book.lastError).toMatch(new RegExp(`products\\.p${n - 7}\\.rules\\[0\\]\\.cond`));
      expect(book.version).toBe(1);
      const wrong: number[] = [];
      for (let i = 0; i < n; i++) {
        if (book.findAddresses(requestFor(`h${i}.example.test`, '/static/x')) !== before[i]) wrong.push(i);
        if (book.findAddresses(requestFor(`h${i}.example.test`, '/other'))?.rule !== `products.p${i}.rules[0]`)
          wrong.push(i);
      }
      expect(wrong).toEqual([]);
      // Fixing the rule applies the whole change at once.
      broken.products[`p${n - 7}`].rules[0].cond = 'default_t()';
      await writeFile(join(dir, 'routes.json'), JSON.stringify(broken));
      await eventually(() => book.version === 2, 10_000, 'the fixed table to load');
      expect(book.findAddresses(requestFor('h0.example.test', '/static/x'))?.cluster).toBe('c1');
      expect(book.lastError).toBeUndefined();
    } finally {
      await book.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an unchanged source is a no-op reload', async () => {
    const dir = await tempDir({ 'routes.yaml': routesYaml(9001) });
    const book = make({ routes: 'routes.yaml' }, dir);
    await book.start();
    expect(await book.reload()).toBe(false);
    expect(book.version).toBe(1);
    await book.close();
    await rm(dir, { recursive: true, force: true });
  });
});

function routesObject(port: number): Record<string, unknown> {
  return {
    products: { p: { hosts: ['a.test'], basicRules: [{ hosts: ['a.test'], cluster: 'c' }] } },
    clusters: { c: { subclusters: { s1: { weight: 1, backends: [{ address: `127.0.0.1:${port}` }] } } } },
  };
}
