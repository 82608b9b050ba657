/**
 * The per-request upstream pool of one client connection (panels/net/upstream-pool.ts, issue
 * 17 item 7): at most `max` idle links, least recently used closed first, one link per key.
 */
import { describe, expect, it } from 'vitest';
import { type PooledLink, UpstreamPool } from '../../panels/net/upstream-pool.ts';

interface FakeLink extends PooledLink {
  readonly socket: { destroyed: boolean };
  reusable: boolean;
}

/** A link whose `destroy` records its key in `closed`. */
function fakeLink(key: string, closed: string[]): FakeLink {
  const link: FakeLink = {
    key,
    reusable: true,
    socket: { destroyed: false },
    destroy() {
      link.reusable = false;
      link.socket.destroyed = true;
      closed.push(key);
    },
  };
  return link;
}

describe('UpstreamPool', () => {
  it.each([
    // [what happens, max, keys parked in order, keys taken after, LRU order left, closed in order]
    ['under the bound nothing closes', 4, ['a', 'b', 'c'], [], ['a', 'b', 'c'], []],
    ['parking a 5th closes the least recently used', 4, ['a', 'b', 'c', 'd', 'e'], [], ['b', 'c', 'd', 'e'], ['a']],
    [
      '30 backends, bound 2: 28 closed oldest first',
      2,
      Array.from({ length: 30 }, (_, i) => `b${i}`),
      [],
      ['b28', 'b29'],
      Array.from({ length: 28 }, (_, i) => `b${i}`),
    ],
    ['bound 0: a parked link closes at once', 0, ['a', 'b'], [], [], ['a', 'b']],
    ['taking a link leaves the others in order', 3, ['a', 'b', 'c'], ['b'], ['a', 'c'], []],
  ] as const)('%s', (_what, max, parked, taken, left, closedWant) => {
    const closed: string[] = [];
    const pool = new UpstreamPool<FakeLink>();
    for (const key of parked) {
      pool.put(fakeLink(key, closed), max);
      expect(pool.size).toBeLessThanOrEqual(max);
    }
    for (const key of taken) expect(pool.take(key)?.key).toBe(key);
    expect(pool.keys()).toEqual(left);
    expect(closed).toEqual(closedWant);
  });

  it('a link taken and parked again becomes the most recently used', () => {
    const closed: string[] = [];
    const pool = new UpstreamPool<FakeLink>();
    const a = fakeLink('a', closed);
    pool.put(a, 3);
    pool.put(fakeLink('b', closed), 3);
    pool.put(fakeLink('c', closed), 3);
    expect(pool.take('a')).toBe(a);
    pool.put(a, 3); // a was used last: b is now the least recently used
    pool.put(fakeLink('d', closed), 3);
    expect(closed).toEqual(['b']);
    expect(pool.keys()).toEqual(['c', 'a', 'd']);
  });

  it('one link per key: parking another for the same key closes the old one, without evicting others', () => {
    const closed: string[] = [];
    const pool = new UpstreamPool<FakeLink>();
    const old = fakeLink('a', closed);
    pool.put(old, 2);
    pool.put(fakeLink('b', closed), 2);
    const fresh = fakeLink('a', closed);
    pool.put(fresh, 2);
    expect(closed).toEqual(['a']);
    expect(old.socket.destroyed).toBe(true);
    expect(pool.keys()).toEqual(['b', 'a']);
    expect(pool.take('a')).toBe(fresh);
  });

  it('take drops a link that closed or may not be reused; forget and destroyAll', () => {
    const closed: string[] = [];
    const pool = new UpstreamPool<FakeLink>();
    const dead = fakeLink('dead', closed);
    const spent = fakeLink('spent', closed);
    const kept = fakeLink('kept', closed);
    for (const l of [dead, spent, kept]) pool.put(l, 4);
    dead.socket.destroyed = true;
    spent.reusable = false;
    expect(pool.take('dead')).toBeUndefined();
    expect(pool.take('spent')).toBeUndefined();
    expect(pool.take('missing')).toBeUndefined();
    expect(pool.keys()).toEqual(['kept']);
    pool.forget(fakeLink('kept', closed)); // another link under the same key: not this one
    expect(pool.size).toBe(1);
    pool.forget(kept);
    expect(pool.size).toBe(0);
    pool.put(fakeLink('x', closed), 4);
    pool.put(fakeLink('y', closed), 4);
    pool.destroyAll();
    expect(pool.size).toBe(0);
    expect(closed).toEqual(['x', 'y']);
  });
});
