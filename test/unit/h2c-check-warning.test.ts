/**
 * `switchboard check` warns for `listeners[].h2c: allow` on a per-request net listener whose
 * address book tells paths apart (issue 40 item 7): such a listener splices an h2c connection
 * routed by its first stream, so later streams reach that backend unchecked. A warning, not an
 * error: the exit code stays 0 (app/h2c-warnings.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { tellsPathsApart } from '../../app/h2c-warnings.ts';
import { runCheck } from '../../cli/check.ts';

const one = { subclusters: { s1: { weight: 1, backends: [{ address: '127.0.0.1:9' }] } } };
const byPath = {
  name: 'bfe',
  products: {
    p: {
      hosts: ['*'],
      rules: [
        { cond: 'req_path_prefix_in("/admin", false)', cluster: 'admin' },
        { cond: 'default_t()', cluster: 'c' },
      ],
    },
  },
  clusters: { c: one, admin: { subclusters: { GSLB_BLACKHOLE: { weight: 1 } } } },
};
const byHost = {
  name: 'bfe',
  products: { p: { hosts: ['*'], rules: [{ cond: 'req_host_in("a.test")', cluster: 'c' }] } },
  clusters: { c: one },
};

describe('switchboard check: h2c: allow on a listener whose book tells paths apart', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swb-h2c-check-'));
    await writeFile(join(dir, 'servers.yaml'), '- { host: "*", path: /api, backends: [127.0.0.1:9] }\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  let n = 0;
  async function check(config: Record<string, unknown>): Promise<{ code: number; err: string }> {
    const file = join(dir, `c${n++}.yaml`);
    await writeFile(file, stringify(config));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const code = await runCheck(file);
      return { code, err: err.mock.calls.map((c) => String(c[0])).join('') };
    } finally {
      err.mockRestore();
      out.mockRestore();
    }
  }
  const listener = (h2c?: string) => [{ name: 'web', address: '127.0.0.1:0', ...(h2c === undefined ? {} : { h2c }) }];

  it('warns (exit 0) for allow with a path rule, naming the listener', async () => {
    const r = await check({ listeners: listener('allow'), addressBook: byPath });
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: .*c\d+\.yaml: listeners\.web\.h2c: allow splices .* tells paths apart/m);
  });

  it('warns for a file book with a path entry, and for worker threads running net', async () => {
    const file = { name: 'file', path: 'servers.yaml' };
    expect((await check({ listeners: listener('allow'), addressBook: file })).err).toMatch(/h2c: allow/);
    const worker = { name: 'worker', threads: 1, engine: 'net' };
    expect((await check({ panel: worker, listeners: listener('allow'), addressBook: byPath })).err).toMatch(
      /h2c: allow/,
    );
  });

  it('is quiet for route (the default), refuse, a book without path rules, the http2 engine, per-connection', async () => {
    const quiet = [
      { listeners: listener(), addressBook: byPath },
      { listeners: listener('route'), addressBook: byPath },
      { listeners: listener('refuse'), addressBook: byPath },
      { listeners: listener('allow'), addressBook: byHost },
      { panel: 'http2', listeners: listener('allow'), addressBook: byPath },
      { routing: 'per-connection', listeners: listener('allow'), addressBook: byPath },
    ];
    for (const config of quiet) {
      const r = await check(config);
      expect(r.code, JSON.stringify(config)).toBe(0);
      expect(r.err, JSON.stringify(config)).not.toMatch(/warning/);
    }
  });
});

describe('tellsPathsApart', () => {
  it.each([
    [{ rules: [{ cond: 'req_path_prefix_in("/a", false)' }] }, true],
    [{ conditions: { api: 'req_url_regmatch("^/api")' } }, true],
    [{ basicRules: [{ hosts: ['a.test'], paths: ['/static/*'] }] }, true],
    [{ basicRules: [{ hosts: ['a.test'], paths: ['/*'] }] }, false],
    [[{ host: '*', path: '/api' }], true],
    [[{ host: '*', path: '/' }], false],
    [{ rules: [{ cond: 'req_host_in("a.test") && req_header_value_in("X", "1", false)' }] }, false],
  ])('%j → %s', (table, expected) => {
    expect(tellsPathsApart(table)).toBe(expected);
  });
});
