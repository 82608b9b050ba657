/**
 * A custom plugin in full TypeScript — an enum and a class with parameter properties, which
 * Node's type stripping refuses (ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX) — is loaded through tsx,
 * through the real CLI: `check` passes, `route` shows the plugin's pick, and the running router
 * sends real traffic where the plugin says (issue 19, "custom plugins in full TypeScript").
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { spawnCli } from '../harness/cli.ts';
import { hasStack, runCli } from '../harness/cli-run.ts';
import { httpGet } from '../harness/http.ts';
import { tempDir } from '../harness/router.ts';

// Not erasable: an enum and parameter properties.
const PLUGIN = `
enum Pick { First = 'first', Last = 'last' }

class Chooser {
  constructor(private readonly pick: Pick) {}
  choose<T>(xs: readonly T[]): T | undefined {
    return this.pick === Pick.First ? xs[0] : xs[xs.length - 1];
  }
}

export default {
  name: 'last-backend',
  create() {
    const chooser = new Chooser(Pick.Last);
    return {
      findJack(_request: unknown, candidates: { subclusters: readonly { name: string; backends: readonly unknown[] }[] }) {
        const sub = candidates.subclusters[0];
        const backend = sub === undefined ? undefined : chooser.choose(sub.backends);
        return backend === undefined ? { refused: 'no_backend' as const } : { backend, subcluster: sub!.name };
      },
    };
  },
};
`;

let dir: string;
let config: string;
let a: TestBackend;
let b: TestBackend;

beforeAll(async () => {
  a = await startHttpBackend('a');
  b = await startHttpBackend('b');
  dir = await tempDir({ 'last-backend.ts': PLUGIN });
  config = join(dir, 'switchboard.yaml');
  await writeFile(
    config,
    stringify({
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      limits: { drainTimeout: '1s' },
      log: { access: 'off' },
      operator: { name: './last-backend.ts' },
      addressBook: {
        name: 'bfe',
        products: {
          web: { hosts: ['www.example.test'], basicRules: [{ hosts: ['www.example.test'], cluster: 'web' }] },
        },
        clusters: {
          web: { subclusters: { s1: { weight: 1, backends: [{ address: a.address }, { address: b.address }] } } },
        },
      },
    }),
  );
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('a full-TypeScript plugin loads through tsx', () => {
  it('check and route accept it; route shows its pick', async () => {
    const check = await runCli(['check', '-c', config]);
    expect(check.code, check.stderr + check.stdout).toBe(0);
    const route = await runCli(['route', '-c', config, '--host', 'www.example.test']);
    expect(route.code, route.stderr).toBe(0);
    expect(route.stdout).toContain(`chosen: ${b.address} in subcluster s1`);
    expect(hasStack(route.stderr)).toBe(false);
  });

  it('the running router sends traffic where the plugin says', async () => {
    const router = spawnCli(config);
    try {
      const port = await router.port('web');
      for (let i = 0; i < 3; i++) {
        const r = await httpGet(port, '/');
        expect(r.headers['x-backend']).toBe('b');
      }
    } finally {
      router.kill();
      await router.exited;
    }
  });
});
