/**
 * `switchboard schema` (issue 19): the JSON Schema of the whole config, plugin options included,
 * printed by the real CLI; every shipped router config validates against it, and invalid ones
 * (a misspelt key, a misspelt plugin name, a wrong option of a plugin) fail it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT, runCli } from '../harness/cli-run.ts';

type Validate = ((data: unknown) => boolean) & { errors?: unknown };
let validate: Validate;
let schema: Record<string, unknown>;

beforeAll(async () => {
  const r = await runCli(['schema']);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  schema = JSON.parse(r.stdout) as Record<string, unknown>;
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  // The formats the schema uses (acme.directory, acme.email), checked as editors check them.
  ajv.addFormat('uri', { type: 'string', validate: (s: string) => URL.canParse(s) });
  ajv.addFormat('email', { type: 'string', validate: (s: string) => /^[^@\s]+@[^@\s]+$/.test(s) });
  validate = ajv.compile(schema) as Validate;
});

/** Every YAML file under conf/ and examples/ that is a router config (it has `listeners`). */
async function routerConfigs(): Promise<string[]> {
  const out: string[] = [];
  for (const top of ['conf', 'examples']) {
    for (const entry of await readdir(join(ROOT, top), { recursive: true })) {
      if (!/\.ya?ml$/.test(entry)) continue;
      const file = join(ROOT, top, entry);
      const doc = parse(await readFile(file, 'utf8')) as unknown;
      if (doc !== null && typeof doc === 'object' && 'listeners' in doc) out.push(file);
    }
  }
  return out.sort();
}

describe('switchboard schema', () => {
  it('is draft 2020-12 and lists each built-in plugin with its options', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const text = JSON.stringify(schema);
    for (const title of ['panel worker', 'operator consistent-hash', 'address book sqlite', 'address book etcd'])
      expect(text).toContain(`"title":"${title}"`);
  });

  it('validates every shipped router config', async () => {
    const files = await routerConfigs();
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const ok = validate(parse(await readFile(file, 'utf8')));
      expect({ file: relative(ROOT, file), ok, errors: ok ? null : validate.errors }).toEqual({
        file: relative(ROOT, file),
        ok: true,
        errors: null,
      });
    }
  });

  const base = { listeners: [{ name: 'web', address: '127.0.0.1:8080' }] };
  it.each([
    ['a misspelt key', { ...base, limits: { idleTimout: '5s' } }],
    ['a misspelt panel', { ...base, panel: 'htpp2' }],
    ['an unknown option of a panel', { ...base, panel: { name: 'worker', treads: 2 } }],
    ['a wrong type in a plugin option', { ...base, addressBook: { name: 'file', path: 'x.yaml', watch: 'yes' } }],
    [
      'a bad balance in an inline cluster',
      { ...base, addressBook: { name: 'bfe', clusters: { web: { balance: 'wrrr' } } } },
    ],
    ['a bad duration', { ...base, limits: { idleTimeout: 'soon' } }],
    ['no listeners', {}],
  ])('fails %s', (_what, config) => {
    expect(validate(config)).toBe(false);
  });

  it('accepts plugin shorthands and module paths', () => {
    for (const c of [
      { ...base, panel: 'http2', operator: 'p2c' },
      { ...base, panel: { name: 'worker', threads: 2 } },
      { ...base, addressBook: { name: './my-book.ts', anything: 1 } },
      { ...base, limits: { idleTimeout: '1.5m', drainTimeout: 2000 } },
    ]) {
      expect(validate(c), JSON.stringify(validate.errors)).toBe(true);
    }
  });
});
