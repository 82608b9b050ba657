/**
 * `switchboard route` shows and matches the path as the listener normalises it (issue 17 item
 * 4): `//admin%2Fsecret` is `/admin/secret` on a default listener, stays literal on a listener
 * with `pathNormalization: { mergeSlashes: false, escapedSlashes: keep }`, and is refused (exit 2)
 * on one with `escapedSlashes: reject`.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { runRoute } from '../../cli/route.ts';
import { tempDir } from '../harness/router.ts';

let dir: string;
let config: string;

beforeAll(async () => {
  dir = await tempDir();
  config = join(dir, 'switchboard.yaml');
  const backends = (port: number) => ({
    subclusters: { s1: { weight: 1, backends: [{ address: `127.0.0.1:${port}` }] } },
  });
  await writeFile(
    config,
    stringify({
      listeners: [
        { name: 'main', address: '127.0.0.1:0' },
        { name: 'keep', address: '127.0.0.1:0', pathNormalization: { mergeSlashes: false, escapedSlashes: 'keep' } },
        { name: 'reject', address: '127.0.0.1:0', pathNormalization: { escapedSlashes: 'reject' } },
      ],
      addressBook: {
        name: 'bfe',
        products: {
          site: {
            hosts: ['site.test'],
            basicRules: [
              { hosts: ['site.test'], paths: ['/admin/*'], cluster: 'admin' },
              { hosts: ['site.test'], cluster: 'web' },
            ],
          },
        },
        clusters: { admin: backends(9001), web: backends(9002) },
      },
    }),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `route` and captures what it prints. */
async function route(path: string, listener?: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => {
    out += String(c);
    return true;
  });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => {
    err += String(c);
    return true;
  });
  try {
    const code = await runRoute({
      config,
      host: 'site.test',
      path,
      method: 'GET',
      header: [],
      client: '127.0.0.1',
      ...(listener === undefined ? {} : { listener }),
    });
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('switchboard route: the normalised path', () => {
  it.each([
    ['//admin%2Fsecret', '/admin/secret', 'admin'],
    ['/x/../%61dmin/secret', '/admin/secret', 'admin'],
    ['/a//b', '/a/b', 'web'],
  ])('default listener: %s is matched and shown as %s (%s)', async (path, shown, cluster) => {
    const r = await route(path);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`path ${shown}`);
    expect(r.out).toMatch(new RegExp(`cluster: ${cluster}\\b`));
  });

  it('--listener keep: slashes and %2F stay literal', async () => {
    const r = await route('//admin%2Fsecret', 'keep');
    expect(r.code).toBe(0);
    expect(r.out).toContain('path //admin%2Fsecret');
    expect(r.out).toMatch(/cluster: web\b/);
  });

  it('--listener reject: %2F is refused with exit 2 and a message', async () => {
    const r = await route('/admin%2Fsecret', 'reject');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/encoded "\/" \(%2F\)/);
  });

  it('an unknown --listener is an error naming the listeners', async () => {
    const r = await route('/', 'nope');
    expect(r.code).toBe(2);
    expect(r.err).toContain('main, keep, reject');
  });
});
