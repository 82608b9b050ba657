/**
 * Differential check of path normalisation against nginx (issue 17 item 4), nginx being the
 * backend whose reading of a path routing must agree with: for generated path spellings
 * (fuzz.ts `pathSpelling`: merged and encoded slashes, encoded dots, double encoding, broken
 * escapes, backslashes), sent to nginx as they are over a real socket,
 *   - whatever we accept, nginx accepts, and the `$uri` it acts on is our normalised path with
 *     its remaining escapes decoded (we keep them for matching; nginx decodes every one);
 *   - whatever nginx refuses, we refuse.
 * We may refuse more (`%5C`): a refusal never lets a request past a rule.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { normalizePath } from '../../src/peek/path.ts';
import { freePort } from '../harness/haproxy.ts';
import { type Nginx, nginxAvailable, startNginx } from '../harness/nginx.ts';
import { pathSpelling, runs, timeoutFor } from './fuzz.ts';

/** nginx's answer to `GET target`: its status and body (`$uri`). */
function ask(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    s.on('connect', () => s.write(`GET ${target} HTTP/1.1\r\nHost: n.test\r\nConnection: close\r\n\r\n`, 'latin1'));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    s.setTimeout(3000, () => s.destroy());
  });
}

/** Every `%XX` decoded once, as latin1 (what nginx does to `$uri`). */
function decodeAll(path: string): string {
  return path.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

function ours(target: string): string | undefined {
  try {
    return normalizePath(target);
  } catch (e) {
    if (isSwitchboardError(e)) return undefined;
    throw e;
  }
}

describe.skipIf(!nginxAvailable())('path spellings: our normalised path is the one nginx acts on', () => {
  let nginx: Nginx;
  let port = 0;

  beforeAll(async () => {
    port = await freePort();
    nginx = await startNginx(
      `server { listen 127.0.0.1:${port}; location / { default_type text/plain; return 200 "$uri"; } }`,
      [port],
    );
  });
  afterAll(async () => {
    await nginx?.close();
  });

  it.each([
    ['//admin/secret', '/admin/secret'],
    ['/admin%2Fsecret', '/admin/secret'],
    ['/x%2F..%2Fadmin/secret', '/admin/secret'],
    ['/%61dmin/./secret', '/admin/secret'],
    ['/a%252Fb', '/a%252Fb'],
  ])('%s → %s, as nginx reads it', async (target, normalised) => {
    expect(ours(target)).toBe(normalised);
    expect(await ask(port, target)).toEqual({ status: 200, body: decodeAll(normalised) });
  });

  it(
    'agrees on every generated spelling (fast-check)',
    async () => {
      await fc.assert(
        fc.asyncProperty(pathSpelling, async (target) => {
          const mine = ours(target);
          const theirs = await ask(port, target);
          const where = `${target} → ours ${mine} / nginx ${theirs.status} ${theirs.body}`;
          if (mine !== undefined) expect(theirs, where).toEqual({ status: 200, body: decodeAll(mine) });
          if (theirs.status !== 200) expect(mine, where).toBeUndefined();
        }),
        { numRuns: runs(300) },
      );
    },
    timeoutFor(300),
  );
});
