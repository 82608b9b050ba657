/**
 * `connectionTokens` (src/peek/http1-fields.ts): the shared sets for one line of just `close` or
 * `keep-alive` (any case) say what the general walk says, and every other value takes the walk.
 */
import { describe, expect, it } from 'vitest';
import { connectionTokens } from '../../src/peek/http1-fields.ts';

const sorted = (s: ReadonlySet<string>) => [...s].sort();

describe('connectionTokens', () => {
  it('one line of just close or keep-alive, in any case', () => {
    expect(sorted(connectionTokens(['close']))).toEqual(['close']);
    expect(sorted(connectionTokens(['CLOSE']))).toEqual(['close']);
    expect(sorted(connectionTokens(['Keep-Alive']))).toEqual(['keep-alive']);
  });

  it('lists, several lines and near misses take the general walk', () => {
    expect(sorted(connectionTokens(['keep-alive, Upgrade']))).toEqual(['keep-alive', 'upgrade']);
    expect(sorted(connectionTokens(['close', 'upgrade']))).toEqual(['close', 'upgrade']);
    expect(sorted(connectionTokens(['closed']))).toEqual(['closed']);
    expect(sorted(connectionTokens(['keep-alivE ,']))).toEqual(['keep-alive']);
    expect(sorted(connectionTokens([' , ']))).toEqual([]);
  });
});
