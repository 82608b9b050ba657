import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggest } from '../../src/base/suggest.ts';

describe('suggest (did you mean)', () => {
  it.each([
    ['idleTimout', ['idleTimeout', 'peekTimeout', 'connectTimeout'], 'idleTimeout'],
    ['round-robbin', ['bfe', 'random', 'round-robin'], 'round-robin'],
    ['req_header_valu_in', ['req_header_value_in', 'req_header_key_in'], 'req_header_value_in'],
    ['htpp2', ['net', 'http2', 'worker'], 'http2'],
    ['terminat', ['off', 'passthrough', 'terminate'], 'terminate'],
    ['IdleTimeout', ['idleTimeout'], 'idleTimeout'],
    ['foo', ['net', 'http2', 'worker'], undefined],
    ['x', ['y', 'z'], undefined],
    ['completelyelse', ['idleTimeout'], undefined],
  ])('%s among %j → %s', (word, known, want) => {
    expect(suggest(word, known)).toBe(want);
  });

  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('htpp2', 'http2')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('formats the hint, or nothing', () => {
    expect(didYouMean('wrrr', ['wrr', 'wlc'])).toBe(' (did you mean "wrr"?)');
    expect(didYouMean('zzzzzz', ['wrr'])).toBe('');
  });
});
