/**
 * The admin listener's bounds in the config (issue 39 item 1): defaults, validation with the
 * key's path, and `switchboard schema` listing them (app/config-schema.ts derives it from zod).
 */
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../app/config-schema.ts';
import { configSchema } from '../../src/config/schema.ts';

const parse = (admin: Record<string, unknown>) =>
  configSchema.safeParse({ listeners: [{ name: 'web', address: '127.0.0.1:0' }], admin });

describe('admin bounds config', () => {
  it('defaults: 64 connections, 16 per client, 5s head, 10s request, 15s idle', () => {
    const r = parse({});
    expect(r.success).toBe(true);
    expect(r.data?.admin).toMatchObject({
      maxConnections: 64,
      maxConnectionsPerClient: 16,
      headersTimeout: 5_000,
      requestTimeout: 10_000,
      idleTimeout: 15_000,
    });
  });

  it.each([
    [{ maxConnections: 0 }, 'admin.maxConnections'],
    [{ maxConnections: 5000 }, 'admin.maxConnections'],
    [{ maxConnectionsPerClient: -1 }, 'admin.maxConnectionsPerClient'],
    [{ headersTimeout: 0 }, 'admin.headersTimeout'],
    [{ headersTimeout: '20s', requestTimeout: '10s' }, 'admin.headersTimeout'],
    [{ idleTimeout: 'soon' }, 'admin.idleTimeout'],
    [{ maxConections: 8 }, 'admin'],
  ] as const)('%o is refused at %s', (admin, path) => {
    const r = parse(admin);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path);
  });

  it('switchboard schema lists the admin bounds and limits.clientIpv6Prefix', async () => {
    const text = JSON.stringify(await configJsonSchema());
    for (const key of ['headersTimeout', 'requestTimeout', 'maxConnectionsPerClient', 'clientIpv6Prefix'])
      expect(text).toContain(`"${key}"`);
  });
});
