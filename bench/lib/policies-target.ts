/**
 * The policy rows (issue 42 item 7): `switchboard-per-request` with a realistic `policies:` set,
 * measured against the same router without one in the same run (bench/targets.json guards the
 * ratio at ≥ 0.9× for keepalive and newconn).
 *
 * 1. At the row's start a list file of 100,000 random IPv4 entries (/24s and /32s, seeded, none
 *    in 127.0.0.0/8, so the bench client at 127.0.0.1 is never listed) is written beside its
 *    config, and a `block` rule reads it (at `connection`, its default point: once per
 *    connection, a binary search over the merged ranges).
 * 2. Ten `block` rules with `when:` on host, path and header (the request point: asked on every
 *    request) that never fire for the bench's `GET /small` with Host 127.0.0.1.
 * 3. One `rate-limit` keyed by client address at the request point, with a rate (10,000,000/s,
 *    burst as much) far above anything the bench sends: every request takes from its bucket.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { seededRandom } from '../../src/base/random.ts';
import { switchboardConf, switchboardServers } from './peers.ts';
import { startSwitchboard } from './targets.ts';
import type { Target } from './types.ts';

/** Entries in the bench's deny list. */
export const POLICY_LIST_ENTRIES = 100_000;

/**
 * `count` random IPv4 list lines, a quarter /24 blocks and the rest single addresses (/32), from
 * `seed`; none in 127.0.0.0/8 or 0.0.0.0/8. `extra` lines go first.
 */
export function randomCidrLines(count: number, seed: number, extra: readonly string[] = []): string {
  const random = seededRandom(seed);
  const lines: string[] = [`# ${count} random IPv4 entries (bench, seed ${seed})`, ...extra];
  for (let i = 0; i < count; i++) {
    let a = 1 + Math.floor(random() * 223);
    if (a === 127) a = 128;
    const b = Math.floor(random() * 256);
    const c = Math.floor(random() * 256);
    if (random() < 0.25) lines.push(`${a}.${b}.${c}.0/24`);
    else lines.push(`${a}.${b}.${c}.${Math.floor(random() * 256)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Ten request-point conditions on host, path and header that the bench's requests never meet. */
export const QUIET_CONDITIONS: readonly string[] = [
  'req_host_in("admin.example.test|internal.example.test")',
  'req_host_suffix_in(".corp.example.test")',
  'req_path_prefix_in("/admin|/internal|/.git", false)',
  'req_path_suffix_in(".php|.asp|.env", true)',
  'req_path_contain("/../|%2e%2e", true)',
  'req_header_value_in("X-Debug", "1|on|true", true)',
  'req_header_value_prefix_in("User-Agent", "sqlmap|nikto|masscan", true)',
  'req_header_key_in("X-Original-URL|X-Rewrite-URL")',
  'req_path_prefix_in("/api/private", false) && !req_header_key_in("Authorization")',
  'req_host_in("old.example.test") && req_path_prefix_in("/checkout", false)',
];

/** The `policies:` block of the row's config, the list file named by its absolute path. */
export function policiesYaml(listFile: string): string {
  const rules = [
    `  - { name: deny-list, use: block, options: { file: ${JSON.stringify(listFile)} } }`,
    ...QUIET_CONDITIONS.map(
      (when, i) => `  - { name: quiet-${i + 1}, use: block, when: ${JSON.stringify(when)}, action: { respond: 403 } }`,
    ),
    '  - { name: per-client, use: rate-limit, point: request, options: { key: client-ip, rate: 10000000/s, burst: 10000000 } }',
  ];
  return `policies:\n${rules.join('\n')}\n`;
}

/** The per-request router with the realistic policy set: the row `switchboard-per-request-policies`. */
export function policiesTarget(name: string): Target {
  return {
    name,
    available: () => undefined,
    scenarios: ['keepalive', 'newconn'],
    start: async (ctx) => {
      const list = join(ctx.dir, `${name}-deny.txt`);
      await writeFile(list, randomCidrLines(POLICY_LIST_ENTRIES, 42));
      return startSwitchboard(
        ctx,
        name,
        (p) => `${switchboardConf(p, 'per-request')}${policiesYaml(list)}`,
        switchboardServers(ctx.backendPort),
      );
    },
  };
}
