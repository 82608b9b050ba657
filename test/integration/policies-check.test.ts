/**
 * `switchboard check` on `policies:` (issue 42 item 4), through the real CLI, and the same
 * warning logged by a real router at start and reload:
 *
 * - `routing: per-connection` on the net panel (and worker/net): a rule at `request` or
 *   `routed` checks only the first request of each connection: a warning naming the rule, exit
 *   0 (warnings do not fail check); none for a `connection` rule, none under per-request (the
 *   http2 panels refuse per-connection: they route every stream).
 * - TLS passthrough has only `connection` and `handshake` and only `close`. The one way a
 *   config can ask for an answer there is a rule's `action: { respond }` at those points, and
 *   check refuses it naming the rule (request and routed rules never run on a passthrough
 *   connection: src/routing/route.ts; the built-ins answer nothing at connection/handshake).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createLogger } from '../../src/base/log.ts';
import { runCli } from '../harness/cli-run.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const SERVERS = '- { host: "*", backends: ["127.0.0.1:9"] }\n';
const RATE = {
  name: 'api-rate',
  use: 'rate-limit',
  when: 'req_path_prefix_in("/api", false)',
  options: { key: 'client-ip', rate: '100/s' },
};
const DENY = { name: 'deny', use: 'block', options: { cidrs: ['192.0.2.0/24'] } };
const MAINT = { name: 'maint', use: 'respond', products: ['shop'], options: { status: 503 } };
const WARNING = (i: number, name: string, point: string) =>
  `policies[${i}] (${name}): runs at ${point}: with routing: per-connection only the first request of each ` +
  'connection is checked; set routing: per-request to check every request';

/** Writes a config with `extra` beside a file book and runs `switchboard check` on it. */
async function check(extra: Record<string, unknown>) {
  const dir = await tempDir({ 'servers.yaml': SERVERS });
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    stringify({
      listeners: [{ name: 'web', address: '127.0.0.1:0' }],
      addressBook: { name: 'file', path: 'servers.yaml' },
      ...extra,
    }),
  );
  return { file, result: await runCli(['check', '--config', file]) };
}

describe('switchboard check: policies', () => {
  it('per-connection routing: a warning per request/routed rule, naming it; exit 0', async () => {
    const { file, result } = await check({ routing: 'per-connection', policies: [DENY, RATE, MAINT] });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(': ok');
    expect(result.messages).toEqual([
      `warning: ${file}: ${WARNING(1, 'api-rate', 'request')}`,
      `warning: ${file}: ${WARNING(2, 'maint', 'routed')}`,
    ]);
  });

  it('a scope: fleet rule warns too (compiled on throwaway counters: no etcd or Redis is asked)', async () => {
    const fleetRate = { ...RATE, options: { ...RATE.options, scope: 'fleet' } };
    const { file, result } = await check({
      routing: 'per-connection',
      fleet: { etcd: { endpoints: ['http://127.0.0.1:1'] }, redis: { url: 'redis://127.0.0.1:1' } },
      policies: [fleetRate],
    });
    expect(result.code).toBe(0);
    expect(result.messages).toEqual([`warning: ${file}: ${WARNING(0, 'api-rate', 'request')}`]);
  });

  it('no warning under per-request routing (the http2 panels refuse per-connection: every stream is routed)', async () => {
    for (const extra of [{ routing: 'per-request' }, { panel: { name: 'http2' } }]) {
      const { result } = await check({ ...extra, policies: [DENY, RATE, MAINT] });
      expect(result.code, JSON.stringify(extra)).toBe(0);
      expect(result.messages, JSON.stringify(extra)).toEqual([]);
    }
  });

  it('worker/net per-connection warns as net does', async () => {
    const { result } = await check({
      routing: 'per-connection',
      panel: { name: 'worker', threads: 1, engine: 'net' },
      policies: [RATE],
    });
    expect(result.code).toBe(0);
    expect(result.messages).toEqual([expect.stringContaining(WARNING(0, 'api-rate', 'request'))]);
  });

  it('an answer at handshake (where passthrough has only close) is refused naming the rule; exit 3', async () => {
    const { result } = await check({
      listeners: [{ name: 'pt', address: '127.0.0.1:0', tls: 'passthrough' }],
      policies: [{ name: 'sni-deny', use: 'block', point: 'handshake', action: { respond: 403 } }],
    });
    expect(result.code).toBe(3);
    expect(result.messages.join('\n')).toMatch(
      /policies\[0\] \(sni-deny\): .*action: respond needs the request point or later; the rule runs at handshake/,
    );
  });
});

describe('the router logs the per-connection warning at start and reload', () => {
  let router: TestRouter | undefined;
  afterEach(async () => {
    await router?.close();
    router = undefined;
  });

  it('once at start, once again at a reload, naming the rule', async () => {
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(JSON.parse(l)) });
    const dir = await tempDir({ 'servers.yaml': SERVERS });
    router = await startTestRouter(
      { routing: 'per-connection', addressBook: { name: 'file', path: 'servers.yaml' }, policies: [DENY, RATE] },
      { dir, runtime: { logger } },
    );
    const warned = () => lines.filter((l) => l.msg === `policies: ${WARNING(1, 'api-rate', 'request')}`);
    expect(warned()).toHaveLength(1);
    expect(warned()[0]?.level).toBe('warn');
    // A changed config (an identical one is a no-op): the rule's rate.
    const file = join(dir, 'switchboard.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('100/s', '50/s'));
    expect((await router.router.reload()).ok).toBe(true);
    expect(warned()).toHaveLength(2);
  });
});
