/**
 * "Did you mean" in config errors (src/config/errors.ts + known-keys.ts): unknown keys are found
 * through defaults, optionals, pipes, unions, arrays and records; bad enum values name the
 * closest allowed one.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssues } from '../../src/config/errors.ts';
import { knownKeysAt } from '../../src/config/known-keys.ts';
import { configSchema } from '../../src/config/schema.ts';

const schema = z.strictObject({
  list: z.array(z.union([z.string(), z.strictObject({ address: z.string(), weight: z.number().default(1) })])),
  byName: z.record(z.string(), z.strictObject({ balance: z.enum(['wrr', 'wlc']).default('wrr') })).optional(),
  nested: z.strictObject({ idleTimeout: z.number() }).default({ idleTimeout: 1 }),
});

function lines(input: unknown): string[] {
  const r = schema.safeParse(input, { reportInput: true });
  return r.success ? [] : formatIssues(r.error.issues, 'x', schema);
}

describe('config errors with did you mean', () => {
  it('finds the keys of the object at a path', () => {
    expect(knownKeysAt(schema, ['nested'])).toEqual(['idleTimeout']);
    expect(knownKeysAt(schema, ['list', 0])).toEqual(['address', 'weight']);
    expect(knownKeysAt(schema, ['byName', 'web'])).toEqual(['balance']);
    expect(knownKeysAt(configSchema, ['limits'])).toContain('idleTimeout');
    expect(knownKeysAt(configSchema, ['listeners', 0, 'pathNormalization'])).toEqual([
      'mergeSlashes',
      'escapedSlashes',
    ]);
  });

  it.each([
    [{ list: [], nested: { idleTimout: 1 } }, 'x.nested.idleTimout: unknown key (did you mean "idleTimeout"?)'],
    [{ list: [{ address: 'a', wieght: 2 }] }, 'x.list[0].wieght: unknown key (did you mean "weight"?)'],
    [{ list: [], byName: { web: { balanse: 'wrr' } } }, 'x.byName.web.balanse: unknown key (did you mean "balance"?)'],
    [
      { list: [], byName: { web: { balance: 'wrrr' } } },
      'x.byName.web.balance: invalid option: expected one of "wrr"|"wlc" (did you mean "wrr"?)',
    ],
    [{ list: [], colour: 1 }, 'x.colour: unknown key'],
  ])('%j → %s', (input, line) => {
    expect(lines(input)).toContain(line);
  });
});
