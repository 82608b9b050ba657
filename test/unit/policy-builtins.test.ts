/**
 * The built-in policies (policies/): each one's verdicts. rate-limit is GCRA on a fake clock
 * (10/s burst 10: 50 at once → exactly 10, Retry-After rounded up), its key table bounded by
 * maxKeys; in-flight gives a slot back exactly once; respond reads its body from a real file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { PolicyAnswer, PolicyVerdict } from '../../src/contracts/policy.ts';
import { LocalConcurrency } from '../../src/policy/concurrency.ts';
import { GcraCounter } from '../../src/policy/gcra.ts';
import { PASS } from '../../src/policy/index.ts';
import { atConnection, atRequest, atRouted, compileRules, fakeClock } from '../harness/policy.ts';

const dir = mkdtempSync(join(tmpdir(), 'swb-policies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const answerOf = (v: PolicyVerdict): PolicyAnswer => {
  if (v.action !== 'answer') throw new Error(`expected an answer, got ${v.action}`);
  return v.answer;
};
const header = (a: PolicyAnswer, name: string) => a.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

describe('block', () => {
  it('an inline list closes at connection (v4 and v6, mapped v4 is v4); others pass', () => {
    const set = compileRules([{ name: 'deny', use: 'block', options: { cidrs: ['127.0.0.2', '2001:db8::/32'] } }]);
    expect(set.connection(atConnection({ clientIp: '127.0.0.2' })).verdict).toEqual({ action: 'close' });
    expect(set.connection(atConnection({ clientIp: '::ffff:127.0.0.2' })).verdict).toEqual({ action: 'close' });
    expect(set.connection(atConnection({ clientIp: '2001:db8:1::5' })).rule).toBe('deny');
    expect(set.connection(atConnection({ clientIp: '127.0.0.1' }))).toBe(PASS);
  });

  it('a list file (comments, blank lines) is read at start; at a request point the answer is 403', async () => {
    const file = join(dir, 'deny.txt');
    writeFileSync(file, '# abusers\n\n198.51.100.0/24   # a range\n  203.0.113.7\n');
    const set = compileRules([{ name: 'deny', use: 'block', point: 'request', options: { file: 'deny.txt' } }], {
      configDir: dir,
    });
    await set.start();
    const a = answerOf(set.request(atRequest({ clientIp: '198.51.100.200' })).verdict);
    expect(a.status).toBe(403);
    expect(set.request(atRequest({ clientIp: '203.0.113.7' })).rule).toBe('deny');
    expect(set.request(atRequest({ clientIp: '203.0.113.8' }))).toBe(PASS);
    await set.close();
  });

  it('a bad list line fails start() with file:line', async () => {
    const file = join(dir, 'bad.txt');
    writeFileSync(file, '10.0.0.0/8\n# fine\n10.0.0.0/33\n');
    const set = compileRules([{ name: 'deny', use: 'block', options: { file } }]);
    await expect(set.start()).rejects.toThrow(`${file}:3: bad address or CIDR "10.0.0.0/33"`);
  });

  it('a bad inline entry is refused at compile with its config path', () => {
    expect(() => compileRules([{ name: 'deny', use: 'block', options: { cidrs: ['10.0.0.0/8', 'nope'] } }])).toThrow(
      'policies[0].options.cidrs:2: bad address or CIDR "nope"',
    );
  });
});

describe('block: the list file is watched', () => {
  // Up to 15 s a wait: a stat-polled reload on a CI machine running test files in parallel.
  const until = async (ok: () => boolean) => {
    const end = Date.now() + 15_000;
    while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    return ok();
  };

  it('an edit takes effect; a bad edit keeps the list it had and is logged with file:line', async () => {
    const file = join(dir, 'watched.txt');
    writeFileSync(file, '192.0.2.1\n');
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
    const set = compileRules([{ name: 'deny', use: 'block', options: { file } }], { logger });
    await set.start();
    const denied = (ip: string) => set.connection(atConnection({ clientIp: ip })).rule === 'deny';
    expect([denied('192.0.2.1'), denied('192.0.2.2')]).toEqual([true, false]);
    writeFileSync(file, '# now the other one\n192.0.2.2\n');
    expect(await until(() => denied('192.0.2.2') && !denied('192.0.2.1'))).toBe(true);
    writeFileSync(file, '192.0.2.3\n192.0.2.999\n');
    expect(await until(() => warnings.length > 0)).toBe(true);
    expect(warnings[0]).toBe(
      `policy deny: ${file}:2: bad address or CIDR "192.0.2.999" (expected 10.0.0.0/8, 192.0.2.1 or 2001:db8::/32); keeping the list it had`,
    );
    expect([denied('192.0.2.2'), denied('192.0.2.3')]).toEqual([true, false]);
    await set.close();
  }, 40_000); // two stat-polled reloads: on a CI machine running test files in parallel, more than 5 s each
});

describe('respond', () => {
  it('status, headers, inline body and content type', () => {
    const set = compileRules([
      {
        name: 'm',
        use: 'respond',
        options: {
          status: 503,
          headers: { 'Retry-After': '120' },
          body: '{"down":true}',
          contentType: 'application/json',
        },
      },
    ]);
    const a = answerOf(set.request(atRequest()).verdict);
    expect(a.status).toBe(503);
    expect(a.headers).toEqual([
      ['Content-Type', 'application/json'],
      ['Retry-After', '120'],
    ]);
    expect(new TextDecoder().decode(a.body)).toBe('{"down":true}');
  });

  it('a body file (.html is text/html) read at start, for one product', async () => {
    writeFileSync(join(dir, 'maintenance.html'), '<h1>back soon</h1>\n');
    const set = compileRules(
      [{ name: 'm', use: 'respond', products: ['shop'], options: { status: 503, file: 'maintenance.html' } }],
      { configDir: dir },
    );
    await set.start();
    const a = answerOf(set.routed(atRouted({}, 'shop', 'web')).verdict);
    expect(header(a, 'content-type')).toBe('text/html; charset=utf-8');
    expect(new TextDecoder().decode(a.body)).toBe('<h1>back soon</h1>\n');
    expect(set.routed(atRouted({}, 'blog', 'web'))).toBe(PASS);
  });

  it('framing headers are the router’s; body and file together are refused', () => {
    expect(() =>
      compileRules([{ name: 'm', use: 'respond', options: { headers: { 'Content-Length': '1' } } }]),
    ).toThrow(/options\.headers\.Content-Length/);
    expect(() => compileRules([{ name: 'm', use: 'respond', options: { body: 'a', file: 'b' } }])).toThrow(
      /give body or file/,
    );
  });
});

describe('redirect', () => {
  const location = (options: object, init: Parameters<typeof atRequest>[0]) => {
    const set = compileRules([{ name: 'r', use: 'redirect', options }]);
    const o = set.request(atRequest(init));
    return o.verdict.action === 'answer' ? [o.verdict.answer.status, header(o.verdict.answer, 'location')] : 'pass';
  };

  it('scheme: https on a plain listener: the path as sent, the query kept; not on the TLS listener', () => {
    const init = { host: 'shop.test', path: '/a b', target: '/a%20b?x=1&y', query: 'x=1&y' };
    expect(location({ scheme: 'https', status: 308 }, init)).toEqual([308, 'https://shop.test/a%20b?x=1&y']);
    expect(location({ scheme: 'https', status: 308 }, { ...init, secure: true })).toBe('pass');
  });

  it('the scheme never comes from an untrusted header; X-Forwarded-Proto only with forwardedProto from an L7 hop', () => {
    const init = { host: 'shop.test', headers: { 'X-Forwarded-Proto': 'https' } };
    expect(location({ scheme: 'https' }, init)).toEqual([302, 'https://shop.test/']);
    expect(location({ scheme: 'https', forwardedProto: true }, init)).toEqual([302, 'https://shop.test/']);
    // A PROXY sender (L4) is trusted for the address, not for the client's own headers.
    const proxied = { ...init, trustedClient: true, clientFrom: 'proxy' as const };
    expect(location({ scheme: 'https', forwardedProto: true }, proxied)).toEqual([302, 'https://shop.test/']);
    const forwarded = { ...init, trustedClient: true, clientFrom: 'header' as const };
    expect(location({ scheme: 'https', forwardedProto: true }, forwarded)).toBe('pass');
  });

  it('host, port, prefix; url replaces the URL and keeps the query; query: drop', () => {
    const init = { host: 'old.test', port: 8080, target: '/p?q=1', path: '/p', query: 'q=1' };
    expect(location({ host: 'new.test' }, init)).toEqual([302, 'http://new.test/p?q=1']);
    expect(location({ prefix: '/v2/' }, init)).toEqual([302, 'http://old.test:8080/v2/p?q=1']);
    expect(location({ scheme: 'https', port: 8443, status: 301 }, init)).toEqual([301, 'https://old.test:8443/p?q=1']);
    expect(location({ url: 'https://elsewhere.test/landing' }, init)).toEqual([
      302,
      'https://elsewhere.test/landing?q=1',
    ]);
    expect(location({ host: 'new.test', query: 'drop' }, init)).toEqual([302, 'http://new.test/p']);
  });

  it('no host in the request: only a configured host or url redirects', () => {
    expect(location({ scheme: 'https' }, { host: '' })).toBe('pass');
    expect(location({ scheme: 'https', host: 'a.test' }, { host: '' })).toEqual([302, 'https://a.test/']);
  });

  it('an absolute-form target keeps only its path', () => {
    expect(
      location({ scheme: 'https' }, { host: 'a.test', target: 'http://a.test/x?y', path: '/x', query: 'y' }),
    ).toEqual([302, 'https://a.test/x?y']);
  });

  it('a status other than 301/302/307/308, or url with host, is refused', () => {
    expect(() => compileRules([{ name: 'r', use: 'redirect', options: { scheme: 'https', status: 303 } }])).toThrow(
      /options\.status/,
    );
    expect(() =>
      compileRules([{ name: 'r', use: 'redirect', options: { url: 'https://a.test/', host: 'b' } }]),
    ).toThrow(/url replaces the whole URL/);
  });
});

describe('rate-limit', () => {
  it('GCRA 10/s burst 10: 50 at once → exactly 10 pass, the rest 429 with Retry-After 1', () => {
    const clock = fakeClock();
    const set = compileRules(
      [{ name: 'api', use: 'rate-limit', point: 'request', options: { key: 'client-ip', rate: '10/s', burst: 10 } }],
      { now: clock.now },
    );
    const outcomes = Array.from({ length: 50 }, () => set.request(atRequest({ clientIp: '192.0.2.1' })));
    expect(outcomes.filter((o) => o.rule === undefined)).toHaveLength(10);
    const refused = outcomes.filter((o) => o.rule === 'api').map((o) => answerOf(o.verdict));
    expect(refused).toHaveLength(40);
    expect(refused.every((a) => a.status === 429 && header(a, 'retry-after') === '1')).toBe(true);
    // Another client has its own budget.
    expect(set.request(atRequest({ clientIp: '192.0.2.2' })).rule).toBeUndefined();
    // One interval (100 ms) later exactly one more passes.
    clock.advance(100);
    expect(set.request(atRequest({ clientIp: '192.0.2.1' })).rule).toBeUndefined();
    expect(set.request(atRequest({ clientIp: '192.0.2.1' })).rule).toBe('api');
  });

  it('Retry-After is the wait in whole seconds, rounded up', () => {
    const clock = fakeClock();
    const set = compileRules(
      [{ name: 'slow', use: 'rate-limit', point: 'request', options: { key: 'rule', rate: '6/m', burst: 1 } }],
      {
        now: clock.now,
      },
    );
    expect(set.request(atRequest()).rule).toBeUndefined();
    expect(header(answerOf(set.request(atRequest()).verdict), 'Retry-After')).toBe('10');
    clock.advance(9_001);
    expect(header(answerOf(set.request(atRequest()).verdict), 'Retry-After')).toBe('1');
    clock.advance(999);
    expect(set.request(atRequest()).rule).toBeUndefined();
  });

  it('at connection it closes; IPv6 clients count by /64 unless ipv6Prefix says otherwise', () => {
    const set = compileRules([{ name: 'conn', use: 'rate-limit', options: { rate: '1/s', burst: 1 } }], {
      now: fakeClock().now,
    });
    expect(set.rules[0]?.point).toBe('connection');
    expect(set.connection(atConnection({ clientIp: '2001:db8:1:2::1' }))).toBe(PASS);
    expect(set.connection(atConnection({ clientIp: '2001:db8:1:2::ffff' })).verdict).toEqual({ action: 'close' });
    expect(set.connection(atConnection({ clientIp: '2001:db8:1:3::1' }))).toBe(PASS);
  });

  it('keys by header (missing header = one shared key), host, product, cluster', () => {
    const now = fakeClock().now;
    const by = (options: object, at: 'request' | 'routed') =>
      compileRules([{ name: 'k', use: 'rate-limit', point: at, options: { rate: '1/s', burst: 1, ...options } }], {
        now,
      });
    const h = by({ key: 'header', header: 'X-Api-Key' }, 'request');
    expect(h.request(atRequest({ headers: { 'x-api-key': 'a' } })).rule).toBeUndefined();
    expect(h.request(atRequest({ headers: { 'x-api-key': 'b' } })).rule).toBeUndefined();
    expect(h.request(atRequest({ headers: { 'x-api-key': 'a' } })).rule).toBe('k');
    expect(h.request(atRequest()).rule).toBeUndefined();
    expect(h.request(atRequest()).rule).toBe('k');
    const host = by({ key: 'host' }, 'request');
    expect(host.request(atRequest({ host: 'a.test' })).rule).toBeUndefined();
    expect(host.request(atRequest({ host: 'b.test' })).rule).toBeUndefined();
    const product = by({ key: 'product' }, 'routed');
    expect(product.routed(atRouted({}, 'p', 'c')).rule).toBeUndefined();
    expect(product.routed(atRouted({ clientIp: '192.0.2.99' }, 'p', 'd')).rule).toBe('k');
    const cluster = by({ key: 'cluster' }, 'routed');
    expect(cluster.routed(atRouted({}, 'p', 'c')).rule).toBeUndefined();
    expect(cluster.routed(atRouted({}, 'q', 'd')).rule).toBeUndefined();
    expect(() => by({ key: 'header' }, 'request')).toThrow(/options\.header: key header needs header: NAME/);
  });

  it('the key table holds at most maxKeys keys: recent keys are kept, keys unused for two turns forgotten', () => {
    const counter = new GcraCounter({ rate: 1, per: 1000, burst: 1, maxKeys: 5 });
    for (let i = 0; i < 1000; i++) {
      counter.take(`10.0.${i >> 8}.${i & 255}`, 0);
      expect(counter.size).toBeLessThanOrEqual(5);
    }
    // Generations of ⌈5/2⌉ = 3: the last 2 keys taken are always kept.
    counter.take('a', 0);
    counter.take('b', 0);
    expect(counter.take('a', 0)).toBeGreaterThan(0); // a kept: its burst of 1 is spent
    expect(counter.take('b', 0)).toBeGreaterThan(0);
    // Rotation: 6 new keys turn the generations twice; a and b, not taken since, are forgotten.
    for (const k of ['c', 'd', 'e', 'f', 'g', 'h']) counter.take(k, 0);
    expect(counter.size).toBeLessThanOrEqual(5);
    expect(counter.take('a', 0)).toBe(0); // forgotten: fresh
    // A key taken again in between is kept (moved to the young generation each time).
    counter.take('k', 0);
    for (const k of ['l', 'm', 'n', 'o']) {
      counter.take(k, 0);
      expect(counter.take('k', 0)).toBeGreaterThan(0);
    }
  });
});

describe('in-flight', () => {
  it('max 2: two held, the third refused (429), a release frees one slot exactly once', () => {
    const set = compileRules([{ name: 'per-client', use: 'in-flight', point: 'request', options: { max: 2 } }]);
    const a = set.request(atRequest());
    const b = set.request(atRequest());
    expect([a.rule, b.rule]).toEqual([undefined, undefined]);
    expect(a.verdict).toEqual({ action: 'pass' });
    expect(answerOf(set.request(atRequest()).verdict).status).toBe(429);
    // Two end paths reporting the same request (a reset after a timeout): one slot back.
    a.release();
    a.release();
    const c = set.request(atRequest());
    expect(c.rule).toBeUndefined();
    expect(set.request(atRequest()).rule).toBe('per-client');
    b.release();
    c.release();
    expect(set.request(atRequest()).rule).toBeUndefined();
  });

  it('at connection it counts connections and closes over the limit', () => {
    const set = compileRules([{ name: 'conns', use: 'in-flight', options: { max: 1 } }]);
    const first = set.connection(atConnection());
    expect(set.connection(atConnection()).verdict).toEqual({ action: 'close' });
    expect(set.connection(atConnection({ clientIp: '192.0.2.77' })).rule).toBeUndefined();
    first.release();
    expect(set.connection(atConnection()).rule).toBeUndefined();
  });

  it('the counter deletes a key at zero: the table holds only keys in progress', () => {
    const c = new LocalConcurrency(5);
    const holds = Array.from({ length: 100 }, (_, i) => c.acquire(`k${i}`));
    expect(c.size).toBe(100);
    for (const h of holds) h?.release();
    expect(c.size).toBe(0);
  });
});
