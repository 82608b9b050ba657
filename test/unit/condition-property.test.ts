/**
 * Properties of the condition compiler (fast-check): any input either compiles or throws our
 * typed SWB_ERR_CONDITION error (never anything else), and generated boolean trees evaluate as
 * the same expression does in JavaScript.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { compileCondition } from '../../src/condition/index.ts';
import { fakeRequest } from './condition-fixtures.ts';

const where = 'rules[0].cond';
const named = { a: 'default_t()', b: '$a && !$c', c: '$b' };

/** True when compiling `source` returns a function or throws our typed error. */
function compilesOrTypedError(source: string): boolean {
  try {
    const c = compileCondition(source, { where, named });
    c(fakeRequest());
    return true;
  } catch (e) {
    return isSwitchboardError(e) && e.code === 'SWB_ERR_CONDITION' && e.message.startsWith(`${where}: `);
  }
}

// Fragments that make near-valid sources far more likely than random text.
const fragment = fc.constantFrom(
  'req_host_in',
  'req_path_in',
  'req_cip_range',
  'req_header_value_hash_in',
  'bfe_time_range',
  'default_t',
  'req_path_regmatch',
  'req_vip_in',
  '$a',
  '$b',
  '$zz',
  '(',
  ')',
  ',',
  '&&',
  '||',
  '!',
  '&',
  '|',
  ' ',
  '\n',
  '//',
  '"',
  '`',
  "'",
  '\\',
  '"a.com"',
  '"/a"',
  'true',
  'false',
  '1',
  '1.1',
  '"1.1.1.1"',
  '"::1"',
  '"0-9999"',
  '`(`',
  '"\\d"',
  '"\\x4"',
  'TRUE',
  'x-y',
  'func',
  '中文',
  '\u0000',
  '"20190204200000H"',
  '$',
);

describe('condition compiler properties', () => {
  it('never throws anything but SWB_ERR_CONDITION on arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), compilesOrTypedError), { numRuns: 2000 });
  });

  it('never throws anything but SWB_ERR_CONDITION on token soup', () => {
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 14 }), (parts) => compilesOrTypedError(parts.join(''))),
      { numRuns: 3000 },
    );
  });

  it('refuses deep nesting with the typed error instead of overflowing the stack', () => {
    for (const source of [`${'('.repeat(10000)}default_t()${')'.repeat(10000)}`, `${'!'.repeat(10000)}default_t()`]) {
      expect(compilesOrTypedError(source)).toBe(true);
      expect(() => compileCondition(source, { where })).toThrow(/nesting deeper than 64 levels/);
    }
  });

  it('compiles and evaluates long flat chains', () => {
    const and = Array.from({ length: 20000 }, () => 'default_t()').join(' && ');
    expect(compileCondition(and, { where })(fakeRequest())).toBe(true);
    const or = `${Array.from({ length: 20000 }, () => '!default_t()').join(' || ')} || default_t()`;
    expect(compileCondition(or, { where })(fakeRequest())).toBe(true);
    expect(compileCondition(`${and} && !default_t()`, { where })(fakeRequest())).toBe(false);
  });

  it('evaluates generated trees as JavaScript does (parenthesised, so never mixed)', () => {
    const { tree } = fc.letrec<{ tree: string }>((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('default_t()', '!default_t()'),
        fc.tuple(tie('tree'), fc.constantFrom('&&', '||'), tie('tree')).map(([l, op, r]) => `(${l} ${op} ${r})`),
        tie('tree').map((t) => `!${t}`),
      ),
    }));
    fc.assert(
      fc.property(tree, (source) => {
        const js = source.replaceAll('!default_t()', 'false').replaceAll('default_t()', 'true');
        const expected = new Function(`return ${js};`)() as boolean;
        expect(compileCondition(source, { where })(fakeRequest())).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
