/**
 * Fuzzing the config loader (issue 13 §1): whatever the YAML text or the parsed object, loading
 * either succeeds or throws a ConfigError (SWB_ERR_CONFIG) naming a path; nothing else escapes.
 * Inputs are arbitrary values, valid configs with one subtree replaced, and mutated YAML text.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig, validateConfig } from '../../app/load-config.ts';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { tempDir } from '../harness/router.ts';
import { runs, timeoutFor } from './fuzz.ts';

const VALID = {
  listeners: [{ name: 'web', address: '127.0.0.1:0', proxyProtocol: 'v2', trustedSources: ['127.0.0.1/32'] }],
  routing: 'per-request',
  limits: { peekTimeout: '2s', maxHeaderBytes: 4096 },
  operator: { name: 'round-robin' },
  addressBook: {
    name: 'bfe',
    defaultProduct: 'web',
    products: { web: { hosts: ['www.example.test'], rules: [{ cond: 'default_t()', cluster: 'web' }] } },
    clusters: { web: { subclusters: { dc1: { weight: 1, backends: [{ address: '127.0.0.1:9001' }] } } } },
  },
};

/** Every path to a value inside `v` (keys and indices). */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, Array.isArray(v) ? Number(k) : k]));
  }
  return out;
}
const ALL_PATHS = paths(VALID);

/** A copy of `base` with the value at `path` replaced by `value`. */
function replaced(base: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path.at(-1)!] = value;
  return copy;
}

const weird = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    '',
    '0',
    '-1',
    '1e309',
    'NaN',
    '10x',
    '99999999999h',
    '127.0.0.1:99999',
    '[::1',
    './nope.ts',
    '../../etc',
  ),
  fc.constantFrom(Number.NaN, Infinity, -0, 2 ** 53 + 1, -1, 0.5),
);
const configValue = fc.oneof(
  weird,
  fc.tuple(fc.constantFrom(...ALL_PATHS), weird).map(([p, v]) => replaced(VALID, p, v)),
);

/** Runs `fn`; resolves true when it threw a typed error, false when it passed; rethrows others. */
async function typed(fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return false;
  } catch (e) {
    if (isSwitchboardError(e)) {
      expect(e.code).toBe('SWB_ERR_CONFIG');
      return true;
    }
    throw e;
  }
}

describe('config loader fuzz', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('the valid base config loads (the fuzz starts from something that passes)', async () => {
    expect(await typed(() => validateConfig(VALID, join(dir, 'c.yaml'), ''))).toBe(false);
  });

  it(
    'any parsed value: loads or throws SWB_ERR_CONFIG naming a path (DESIGN "Config contract")',
    async () => {
      await fc.assert(
        fc.asyncProperty(configValue, async (value) => {
          await typed(() => validateConfig(value, join(dir, 'c.yaml'), ''));
        }),
        { numRuns: runs(400) },
      );
    },
    timeoutFor(400, 10),
  );

  it(
    'any YAML text (mutated valid file, or noise): loads or throws SWB_ERR_CONFIG',
    async () => {
      const text = stringify(VALID);
      const mutated = fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.tuple(fc.nat(), fc.nat({ max: 20 }), fc.string({ maxLength: 12 })).map(([at, cut, insert]) => {
          const i = at % (text.length + 1);
          return text.slice(0, i) + insert + text.slice(i + cut);
        }),
        fc.constantFrom(
          'a: &x [*x]\n',
          'listeners: !!binary aGk=\n',
          'a: 1\na: 2\n',
          '- - - -\n',
          '\t:\n',
          '%YAML 9.9\n---\n',
          '*!', // an alias without an anchor: toJS() threw a ReferenceError (fixed in src/config/load.ts)
          'a: *x\n',
        ),
      );
      const file = join(dir, 'fuzz.yaml');
      await fc.assert(
        fc.asyncProperty(mutated, async (t) => {
          await writeFile(file, t);
          await typed(() => loadConfig(file));
        }),
        { numRuns: runs(300) },
      );
    },
    timeoutFor(300, 10),
  );
});
