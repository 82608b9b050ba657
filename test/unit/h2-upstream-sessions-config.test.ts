/**
 * `limits.maxUpstreamSessionsPerBackend` (issue 40 item 1): default 8, validated with its path,
 * listed by `switchboard schema` (app/config-schema.ts derives it from zod).
 */
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../app/config-schema.ts';
import { configSchema } from '../../src/config/schema.ts';

const parse = (limits: Record<string, unknown>) =>
  configSchema.safeParse({ listeners: [{ name: 'web', address: '127.0.0.1:0' }], limits });

describe('limits.maxUpstreamSessionsPerBackend', () => {
  it('defaults to 8', () => {
    expect(parse({}).data?.limits.maxUpstreamSessionsPerBackend).toBe(8);
    expect(parse({ maxUpstreamSessionsPerBackend: 2 }).data?.limits.maxUpstreamSessionsPerBackend).toBe(2);
  });

  it.each([0, 65, 1.5, 'many'])('%o is refused at limits.maxUpstreamSessionsPerBackend', (value) => {
    const r = parse({ maxUpstreamSessionsPerBackend: value });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain('limits.maxUpstreamSessionsPerBackend');
  });

  it('switchboard schema lists it', async () => {
    expect(JSON.stringify(await configJsonSchema())).toContain('"maxUpstreamSessionsPerBackend"');
  });
});
