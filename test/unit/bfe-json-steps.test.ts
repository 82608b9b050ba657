/**
 * The routes file's JSON parsed in steps from its bytes (address-books/lib/json-steps.ts): the
 * same value as `JSON.parse` (key order, duplicates, `__proto__`, odd whitespace, multi-byte
 * UTF-8), the same error for bad bytes, one step per product or cluster, and the previous parse's
 * values (and section objects) for members whose bytes did not change.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bfeAddressBook } from '../../address-books/bfe/book.ts';
import { JsonPieces } from '../../address-books/lib/json-steps.ts';
import { runToEnd } from '../../address-books/lib/sliced.ts';
import { seededRandom } from '../../src/base/random.ts';
import { LocalRegistry } from '../../src/registry/local.ts';
import { tempDir } from '../harness/router.ts';

function parse(p: JsonPieces, text: string | Buffer): unknown {
  return runToEnd(p.parse(typeof text === 'string' ? Buffer.from(text) : text));
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
  '{"products":{"é":{"hosts":["ü.test","\\u00fc"]},"日本":"語","a😀":["😀"]},"clusters":{"c":"\u2028"}}',
  '{"products":{"p":1},"clusters":{"c":2},"products":{"q":3}}',
  '{"products":5,"products":{"q":3}}',
  '{"products":{"p":{"a":1}},"defaultProduct":"p","defaultProduct":"q"}',
  '{"products":{"p":12,"q":"x","r":{"s":[1,{"t":"}]"}]}}}',
  '{"products":{"a\\"b":1,"\\u0041":2}}',
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
  '{"products":{"p":{"a":1}}},"clusters":{}}',
  '{"products":{"p\u0001":1}}',
  '{"products":{"p":1},"products":{"p":1}}',
  '{"products":{"p":{"hosts":["é"]}}',
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

  it('reads bytes: a byte-order mark fails as JSON.parse fails; invalid UTF-8 reads as readFile decodes it', () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(table))]);
    const p = new JsonPieces();
    parse(p, JSON.stringify(table));
    expect(errorOf(() => parse(p, bom))).toBe(errorOf(() => JSON.parse(bom.toString('utf8'))));
    expect(errorOf(() => parse(p, bom))).toMatch(/^SyntaxError: /);
    const broken = Buffer.from(
      '{"products":{"p":{"hosts":["a\xff\xc3.test"]},"\xe2q":"\xf0\x9f"},"clusters":{}}',
      'latin1',
    );
    expect(parse(p, broken)).toStrictEqual(JSON.parse(broken.toString('utf8')));
    expect(parse(p, broken)).toStrictEqual(JSON.parse(broken.toString('utf8')));
  });

  it('the previous values survive any sequence of edits (200 rounds against JSON.parse)', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const member = () =>
      [
        () => ({ hosts: [`h${rnd(5)}.test`, 'ü.test'], rules: [{ cond: 'default_t()', cluster: `c${rnd(3)}` }] }),
        () => rnd(100),
        () => `s${rnd(3)}`,
        () => [rnd(3), { x: '}]"' }],
        () => ({}),
      ][rnd(5)]!();
    const state: Record<string, Record<string, unknown>> = { products: {}, clusters: {} };
    const p = new JsonPieces();
    let last: Record<string, Record<string, unknown>> | undefined;
    let lastIndent = -1;
    for (let round = 0; round < 200; round++) {
      const section = state[rnd(2) === 0 ? 'products' : 'clusters']!;
      const name = ['a', 'b', 'c', 'é', '10'][rnd(5)]!;
      const op = rnd(4);
      if (op === 0) delete section[name];
      else if (op === 1) {
        // Move a member to the end: same bytes, another place.
        const v = section[name];
        delete section[name];
        if (v !== undefined) section[name] = v;
      } else section[name] = member();
      const indent = rnd(3);
      const text = JSON.stringify({ defaultProduct: 'a', ...state }, null, indent);
      const value = parse(p, text) as Record<string, Record<string, unknown>>;
      expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(text)));
      expect(value).toStrictEqual(JSON.parse(text));
      // Same indent, same bytes for an unchanged member (at any place): its previous object.
      if (last !== undefined && indent === lastIndent) {
        for (const key of ['products', 'clusters']) {
          for (const [n, v] of Object.entries(value[key]!)) {
            if (typeof v === 'object' && JSON.stringify(v) === JSON.stringify(last[key]![n])) {
              expect(v).toBe(last[key]![n]);
            }
          }
        }
      }
      last = value;
      lastIndent = indent;
    }
  });

  it('hands back the previous section object when no member of it changed', () => {
    const p = new JsonPieces();
    const one = parse(p, JSON.stringify(table)) as typeof table;
    const changed = structuredClone(table);
    changed.clusters.c1.subclusters.a.weight = 2;
    const two = parse(p, JSON.stringify(changed)) as typeof table;
    expect(two.products).toBe(one.products);
    expect(two.clusters).not.toBe(one.clusters);
    expect(two.conditions).not.toBe(one.conditions);
    const moved = { ...changed, products: { 2: table.products[2], p1: table.products.p1 } };
    const three = parse(p, JSON.stringify(moved)) as typeof table;
    expect(three.products).toBe(two.products); // integer keys first: the same order as before
    const reordered = { ...changed, products: { p1: table.products.p1, p3: table.products[2] } };
    const four = parse(p, JSON.stringify(reordered)) as Record<string, Record<string, unknown>>;
    expect(four.products).not.toBe(two.products);
    expect(four.products!.p1).toBe(one.products.p1);
    expect(four.products!.p3).toStrictEqual(table.products[2]);
  });

  it('yields between the members of products and clusters', () => {
    const steps = new JsonPieces().parse(Buffer.from(JSON.stringify(table)));
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
