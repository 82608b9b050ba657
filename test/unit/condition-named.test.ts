/**
 * Named conditions (`conditions:` → `$name`, reference bfe.md §1.3 and the issue): resolution,
 * unknown names, cycles, and errors chained from the rule into the named source.
 */
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { checkNamedConditions, compileCondition } from '../../src/condition/index.ts';
import { fakeRequest } from './condition-fixtures.ts';

const where = 'addressBook.products.web.rules[0].cond';
const named = {
  canary: 'req_header_value_in("X-Canary", "1", false)',
  api: 'req_path_prefix_in("/api", false)',
  'canary-api': '$canary && $api',
};

/** The message of the SWB_ERR_CONDITION thrown by `f`. */
function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isSwitchboardError(e) && e.code === 'SWB_ERR_CONDITION') return e.message;
    throw e;
  }
  throw new Error('expected a SWB_ERR_CONDITION');
}

describe('named conditions', () => {
  it('resolves $name, including names that use other names', () => {
    const c = compileCondition('$canary-api || req_method_in("DELETE")', { where, named });
    expect(c(fakeRequest({ path: '/api/x', headers: { 'X-Canary': '1' } }))).toBe(true);
    expect(c(fakeRequest({ path: '/api/x' }))).toBe(false);
    expect(c(fakeRequest({ method: 'DELETE' }))).toBe(true);
  });

  it('names an unknown condition with its column', () => {
    expect(errorOf(() => compileCondition('default_t() && $nope', { where, named }))).toBe(
      `${where}: column 16: unknown condition $nope`,
    );
  });

  it('chains errors from the rule into the named source', () => {
    const bad = { broken: 'req_path_in("/a")' };
    expect(errorOf(() => compileCondition('$broken', { where, named: bad }))).toBe(
      `${where}: column 1: in $broken: column 1: req_path_in expects 2 arguments (list, fold), got 1`,
    );
  });

  it('detects cycles', () => {
    const loop = { a: '$b', b: 'default_t() && $c', c: '!$a' };
    expect(errorOf(() => compileCondition('$a', { where, named: loop }))).toMatch(
      /condition cycle \$a → \$b → \$c → \$a$/,
    );
    expect(errorOf(() => compileCondition('$self', { where, named: { self: '$self' } }))).toMatch(
      /condition cycle \$self → \$self$/,
    );
  });

  it('a bare identifier stays an unresolved variable, with a hint when the name exists', () => {
    expect(errorOf(() => compileCondition('canary', { where, named }))).toMatch(
      /unresolved variable 'canary'.*write \$canary for the named condition/,
    );
  });

  it('checkNamedConditions validates the whole set', () => {
    expect(() => checkNamedConditions(named, 'addressBook.conditions')).not.toThrow();
    expect(errorOf(() => checkNamedConditions({ a: '$b', b: '$a' }, 'addressBook.conditions'))).toMatch(
      /^addressBook\.conditions\.a: column 1: in \$b: column 1: condition cycle \$a → \$b → \$a$/,
    );
    expect(errorOf(() => checkNamedConditions({ a: '$zzz' }, 'addressBook.conditions'))).toBe(
      'addressBook.conditions.a: column 1: unknown condition $zzz',
    );
    expect(errorOf(() => checkNamedConditions({ 'bad name': 'default_t()' }, 'addressBook.conditions'))).toMatch(
      /^addressBook\.conditions\.bad name: bad condition name/,
    );
    expect(errorOf(() => checkNamedConditions({ ok: 'req_cip_range("1", "2")' }, 'c'))).toMatch(
      /^c\.ok: column 15: req_cip_range: bad IP address "1"$/,
    );
  });
});
