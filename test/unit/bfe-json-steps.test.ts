/**
 * The routes file's JSON parsed in steps (address-books/lib/json-steps.ts): the same value as
 * `JSON.parse` (key order, duplicates, `__proto__`, odd whitespace), the same error for bad text,
 * one step per product or cluster, and the previous parse's values for unchanged members.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bfeAddressBook } from '../../address-books/bfe/book.ts';
import { JsonPieces } from '../../address-books/lib/json-steps.ts';
import { runToEnd } from '../../address-books/lib/sliced.ts';
import { LocalRegistry } from '../../src/local-registry.ts';
import { seededRandom } from '../../src/random.ts';
import { tempDir } from '../harness/router.ts';

function parse(p: JsonPieces, text: string): unknown {
  return runToEnd(p.parse(text));
}

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return 'no error';
}

const table = {
  defaultProduct: 'p1',
  conditions: { a: 'default_t()' },
  products: {
    p1: { hosts: ['a.test', 'b.test'], rules: [{ cond: 'default_t()', cluster: 'c1' }] },
    2: { hosts: ['x'] },
  },
  clusters: { c1: { subclusters: { a: { weight: 1, backends: [{ address: '127.0.0.1:1' }] } } } },
};

const texts = [
  JSON.stringify(table),
  JSON.stringify(table, null, 2),
  ' \r\n\t{ "products" : { "p" : { "hosts" : [ "a\\"}{" , "\\u0062" ] } } , "clusters" : { } } \n',
  '{"products":{"p":1,"q":"s","r":null,"t":true,"u":-1.5e3,"v":[],"w":{}},"clusters":[]}',
  '{"products":{"p":{"a":1},"p":{"b":2},"q":3},"products":{"z":1}}',
  '{"products":{"__proto__":{"hosts":["a"]}}}',
  '{"__proto__":{"x":1}}',
  '{"products":{"10":1,"2":2,"b":3,"a":4}}',
  '{}',
  '[]',
  '"products"',
  '{"products":{}}',
  '{"products":{"p":"a\\\\","q":"\\\\\\"\\\\","r":["\\\\"]}}',
  '{"products":"x","clusters":5}',
];

const bad = [
  '',
  '{',
  '{"products":{"p":{"hosts":["a"]}}',
  '{"products":{"p":{"hosts":["a"]}}}}',
  '{"products":{"p":{"hosts":["a",]}}}',
  '{"products":{"p":tru}}',
  '{"products":{"p":1 2}}',
  '{"products":{"p" 1}}',
  '{"products":{p:1}}',
  '{"products":{"p":"a\nb"}}',
  '\uFEFF{}',
  '{"products":{"p":{}},}',
  '{"products":{"p":"\\x"}}',
  '{"a":1}x',
  '{"products":{"p":[}]}}',
];

describe('routes file JSON in steps', () => {
  it('gives what JSON.parse gives, key order included', () => {
    for (const text of texts) {
      const value = parse(new JsonPieces(), text);
      expect(value).toStrictEqual(JSON.parse(text));
      expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(text)));
    }
    const proto = parse(new JsonPieces(), texts[5]!) as { products: object };
    expect(Object.getPrototypeOf(proto.products)).toBe(Object.prototype);
    expect(Object.keys(proto.products)).toEqual(['__proto__']);
  });

  it('throws the error JSON.parse throws for bad text', () => {
    for (const text of bad) {
      const p = new JsonPieces();
      parse(p, JSON.stringify(table));
      expect(errorOf(() => parse(p, text))).toBe(errorOf(() => JSON.parse(text)));
    }
  });

  it('yields between the members of products and clusters', () => {
    const steps = new JsonPieces().parse(JSON.stringify(table));
    let n = 0;
    while (!steps.next().done) n++;
    expect(n).toBe(3);
  });

  it('keeps the previous value of an unchanged member, parses a changed one', () => {
    const p = new JsonPieces();
    const one = parse(p, JSON.stringify(table)) as typeof table;
    const changed = structuredClone(table);
    changed.clusters.c1.subclusters.a.weight = 2;
    const two = parse(p, JSON.stringify(changed)) as typeof table;
    expect(two).toStrictEqual(changed);
    expect(two.products.p1).toBe(one.products.p1);
    expect(two.products[2]).toBe(one.products[2]);
    expect(two.clusters.c1).not.toBe(one.clusters.c1);
    // A bad text in between forgets nothing it should not: the next good parse is still right.
    expect(() => parse(p, '{"products":{"p1":x}}')).toThrow(SyntaxError);
    const three = parse(p, JSON.stringify(table)) as typeof table;
    expect(three).toStrictEqual(table);
  });

  it('the bfe book: a routes file that is not JSON keeps the old table, with JSON.parse’s message', async () => {
    const dir = await tempDir();
    try {
      const file = join(dir, 'routes.json');
      await writeFile(file, JSON.stringify(table));
      const context = { configDir: dir, registry: new LocalRegistry(), logger: pino({ level: 'silent' }) };
      const book = bfeAddressBook.create(bfeAddressBook.options.parse({ routes: 'routes.json' }), {
        ...context,
        random: seededRandom(1),
      });
      await book.start();
      const text = '{"products":{"p1":{"hosts":["a.test"]},}}';
      await writeFile(file, text);
      expect(await book.reload()).toBe(false);
      expect(book.lastError).toBe(
        `addressBook.routes: ${file}: ${errorOf(() => JSON.parse(text))
          .split(': ')
          .slice(1)
          .join(': ')}`,
      );
      expect(book.routingTable()?.products.p1?.hosts).toEqual(['a.test', 'b.test']);
      await book.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
