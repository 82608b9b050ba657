/**
 * `switchboard route --json` has one shape whatever the address book (issue 19 item 5): the
 * `file` book (no step-by-step explanation of its own) answers with the same keys as `bfe`, its
 * rule id in `rule.where`, and the same text lines (product, cluster, chosen); a miss is exit 1.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RouteExplanation } from '../../app/explain/explain.ts';
import { runCli } from '../harness/cli-run.ts';
import { EXPLANATION_KEYS } from '../harness/explanation.ts';
import { tempDir } from '../harness/router.ts';

let dir: string;

beforeAll(async () => {
  dir = await tempDir({
    'servers.yaml': stringify([
      { host: '*.mysite.test', path: '/api', backends: ['127.0.0.1:3002'] },
      { host: 'www.mysite.test', backends: ['127.0.0.1:3000'] },
    ]),
    'file.yaml': stringify({
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: { name: 'file', path: 'servers.yaml' },
    }),
    'bfe.yaml': stringify({
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['www.mysite.test'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: '127.0.0.1:3000' }] } } } },
      },
    }),
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('one explanation shape for every address book', () => {
  it.each(['file', 'bfe'])(
    '%s book: --json keys, rule, chosen; text lines',
    async (book) => {
      const config = join(dir, `${book}.yaml`);
      const json = await runCli(['route', '-c', config, '--host', 'www.mysite.test:8443', '--json']);
      expect(json.code, json.stderr).toBe(0);
      const e = JSON.parse(json.stdout) as RouteExplanation;
      expect(Object.keys(e).sort()).toEqual(EXPLANATION_KEYS);
      expect(e.request).toMatchObject({ host: 'www.mysite.test', port: 8443, path: '/', protocol: 'http1' });
      expect(typeof e.rule?.where).toBe('string');
      expect(e.chosen).toMatchObject({ backend: '127.0.0.1:3000', attempt: 1 });
      const text = await runCli(['route', '-c', config, '--host', 'www.mysite.test']);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^product: /m);
      expect(text.stdout).toMatch(/^cluster: /m);
      expect(text.stdout).toMatch(/^chosen: 127\.0\.0\.1:3000 in subcluster /m);
      const miss = await runCli(['route', '-c', config, '--host', 'nowhere.test', '--json']);
      expect(miss.code).toBe(1);
      expect(Object.keys(JSON.parse(miss.stdout) as object).sort()).toEqual(EXPLANATION_KEYS);
    },
    30_000,
  );

  it('file book: the path prefix entry wins for /api on a wildcard host', async () => {
    const r = await runCli(['route', '-c', join(dir, 'file.yaml'), '--host', 'a.mysite.test', '--path', '/api/x']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^chosen: 127\.0\.0\.1:3002/m);
  });
});
