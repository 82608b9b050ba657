/**
 * `startTestRouter(config)`: the real router from a config object, listening on port 0, with
 * its access log captured in memory and its own log silenced. Plugin paths resolve against `dir`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { validateConfig } from '../../app/load-config.ts';
import type { RuntimeOptions } from '../../app/runtime/runtime.ts';
import { type Router, startLoaded } from '../../app/start.ts';
import { type AccessRecord, createLogger } from '../../src/base/log.ts';

export interface TestRouter {
  readonly router: Router;
  /** Port of the first listener (or of `name`). */
  port(name?: string): number;
  /** Access-log records written so far. */
  readonly access: AccessRecord[];
  /** Resolves once `n` access records exist (polls; generous limit). */
  waitForAccess(n: number, timeoutMs?: number): Promise<AccessRecord[]>;
  readonly dir: string;
  close(): Promise<void>;
}

/** Default listener: one plaintext listener on 127.0.0.1:0. */
export const LISTEN = [{ name: 'web', address: '127.0.0.1:0' }];

/** Starts the router described by `config` (listeners default to LISTEN). */
export async function startTestRouter(
  config: Record<string, unknown>,
  options: { dir?: string; runtime?: RuntimeOptions } = {},
): Promise<TestRouter> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'swb-test-')));
  const ownDir = options.dir === undefined;
  // A short drain so tests that leave a connection open do not wait the default 30 s on close.
  const full = {
    listeners: LISTEN,
    ...config,
    limits: { drainTimeout: '1s', ...(config.limits as object | undefined) },
  };
  const file = join(dir, 'switchboard.yaml');
  const text = stringify(full);
  await writeFile(file, text);
  const loaded = await validateConfig(full, file, text);
  const access: AccessRecord[] = [];
  const router = await startLoaded(loaded, {
    logger: createLogger('silent'),
    accessLog: (r) => access.push({ ...r }),
    ...options.runtime,
  });
  return {
    router,
    access,
    dir,
    port(name) {
      const addrs = router.panel.addresses();
      const a = name === undefined ? Object.values(addrs)[0] : addrs[name];
      if (a === undefined) throw new Error(`no listener ${name ?? ''}`);
      return a.port;
    },
    async waitForAccess(n, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (access.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} access records, have ${access.length}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return access;
    },
    async close() {
      await router.close();
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns true (generous limit; timing never decides a test). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A fresh temporary directory holding `files` (name → content). */
export async function tempDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'swb-test-'));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

/**
 * A router on `dir` with one `tls: terminate` listener named `tls` serving `live.crt`/`live.key`
 * from `dir` (the files the certificate-watch tests swap), routing `host` to `backend`; its log
 * lines (JSON text) collect in `lines`.
 */
export async function startLiveCertRouter(
  panel: unknown,
  dir: string,
  host: string,
  backend: string,
): Promise<{ router: TestRouter; lines: string[] }> {
  const lines: string[] = [];
  const router = await startTestRouter(
    {
      panel,
      listeners: [
        {
          name: 'tls',
          address: '127.0.0.1:0',
          tls: 'terminate',
          certificates: [{ cert: 'live.crt', key: 'live.key' }],
        },
      ],
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: [host], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: { c: { subclusters: { s: { weight: 1, backends: [{ address: backend }] } } } },
      },
    },
    { dir, runtime: { logger: createLogger('info', { write: (s: string) => void lines.push(s) }) } },
  );
  return { router, lines };
}
