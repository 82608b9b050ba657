/**
 * MemberList (src/base/member-list.ts): members join and leave in any order, a removed node keeps
 * nothing (the point of the list: no dead object may point at a member), a second remove does
 * nothing, and a walk is a copy that members may leave during.
 */
import { describe, expect, it } from 'vitest';
import { MemberList } from '../../src/base/member-list.ts';

describe('MemberList', () => {
  it('adds and removes members in any order, newest first', () => {
    const list = new MemberList<string>();
    const a = list.add('a');
    const b = list.add('b');
    const c = list.add('c');
    expect(list.values()).toEqual(['c', 'b', 'a']);
    list.remove(b); // middle
    expect(list.values()).toEqual(['c', 'a']);
    list.remove(c); // head
    expect(list.values()).toEqual(['a']);
    list.remove(a); // last
    expect(list.values()).toEqual([]);
    expect(list.size).toBe(0);
    list.add('d');
    expect(list.values()).toEqual(['d']);
  });

  it('clears a removed node and ignores a second remove', () => {
    const list = new MemberList<object>();
    const first = list.add({});
    const node = list.add({});
    list.add({});
    list.remove(node);
    expect(node).toEqual({ value: undefined, prev: undefined, next: undefined });
    list.remove(node);
    expect(list.size).toBe(2);
    list.clear();
    expect(list.size).toBe(0);
    expect(first).toEqual({ value: undefined, prev: undefined, next: undefined });
    list.remove(first); // after clear: nothing
    expect(list.size).toBe(0);
  });

  it('walks a copy: members may leave (and join) during the walk', () => {
    const list = new MemberList<number>();
    const nodes = [1, 2, 3, 4].map((n) => list.add(n));
    const seen: number[] = [];
    for (const n of list.values()) {
      seen.push(n);
      list.remove(nodes[n - 1]!);
      if (n === 4) list.add(5);
    }
    expect(seen).toEqual([4, 3, 2, 1]);
    expect(list.values()).toEqual([5]);
  });
});
