/**
 * The cluster policy schema and its defaults (DESIGN "Defaults for a cluster"), shared by every
 * address book: the `bfe` book's `clusters.*` entries and each entry of a flat book.
 */
import { z } from 'zod';
import type { ClusterPolicy, HealthCheckPolicy } from '../contracts/types.ts';
import { duration } from './duration.ts';
import { notSecret } from './not-secret.ts';
import { compileOutlierStatus } from './outlier-status.ts';

export const MAX_ATTEMPTS = 20;

export const healthCheckSchema = z.strictObject({
  type: z.enum(['tcp', 'http']).default('tcp'),
  interval: duration.default(1000),
  timeout: duration.default(1000),
  failNum: z.number().int().min(1).default(5),
  succNum: z.number().int().min(1).default(1),
  active: z.boolean().default(false),
  path: z.string().startsWith('/').default('/'),
  host: z.string().default(''),
  statusCode: z.number().int().min(100).max(599).default(200),
});

export const hashSchema = z
  .strictObject({
    strategy: z.enum(['client-ip', 'header', 'cookie', 'uri']).default('client-ip'),
    key: notSecret(z.string()).default(''),
  })
  .superRefine((h, ctx) => {
    if ((h.strategy === 'header' || h.strategy === 'cookie') && h.key === '') {
      ctx.addIssue({ code: 'custom', path: ['key'], message: `hash strategy ${h.strategy} needs a key` });
    }
  });

/** Policy keys as they appear in config (all optional; defaults applied). */
export const policyShape = {
  balance: z.enum(['wrr', 'wlc', 'sticky']).default('wrr'),
  hash: hashSchema.default({ strategy: 'client-ip', key: '' }),
  retries: z.number().int().min(0).max(19).default(2),
  crossRetries: z.number().int().min(0).max(19).default(0),
  slowStart: duration.default(0),
  proxyProtocol: z.enum(['off', 'v1', 'v2']).default('off'),
  healthCheck: healthCheckSchema.default(healthCheckSchema.parse({})),
  /** Upstream protocol of the `http2` panel. */
  protocol: z.enum(['http1', 'h2c', 'h2']).default('http1'),
  /** Connect to the backends over TLS (src/tls/upstream.ts); `ca` is relative to the config dir. */
  tls: z
    .strictObject({
      sni: z.string().min(1).optional(),
      ca: z.string().min(1).optional(),
      verify: z.boolean().default(true),
    })
    .optional(),
  /** Response statuses counted as backend failures (per-request routing; src/config/outlier-status.ts). */
  outlierStatus: z
    .string()
    .default('')
    .superRefine((v, ctx) => {
      try {
        compileOutlierStatus(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
};

/** Checks the retry budget: 1 + retries + crossRetries ≤ 20 attempts. */
export function checkRetryBudget(p: { retries: number; crossRetries: number }, ctx: z.RefinementCtx): void {
  if (1 + p.retries + p.crossRetries > MAX_ATTEMPTS) {
    ctx.addIssue({
      code: 'custom',
      path: ['crossRetries'],
      message: `retries + crossRetries must be ≤ ${MAX_ATTEMPTS - 1}, got ${p.retries + p.crossRetries}`,
    });
  }
}

const healthDefaults: HealthCheckPolicy = healthCheckSchema.parse({});

/** The policy of a cluster that sets nothing. */
export const DEFAULT_POLICY: ClusterPolicy = Object.freeze({
  balance: 'wrr',
  hash: Object.freeze({ strategy: 'client-ip', key: '' }),
  retries: 2,
  crossRetries: 0,
  slowStart: 0,
  proxyProtocol: 'off',
  healthCheck: Object.freeze(healthDefaults),
  protocol: 'http1',
  outlierStatus: '',
}) as ClusterPolicy;

/** Picks the policy keys out of a parsed cluster entry. */
export function toPolicy(c: z.output<z.ZodObject<typeof policyShape>>): ClusterPolicy {
  return Object.freeze({
    balance: c.balance,
    hash: Object.freeze({ ...c.hash }),
    retries: c.retries,
    crossRetries: c.crossRetries,
    slowStart: c.slowStart,
    proxyProtocol: c.proxyProtocol,
    healthCheck: Object.freeze({ ...c.healthCheck }),
    protocol: c.protocol,
    outlierStatus: c.outlierStatus,
    ...(c.tls === undefined ? {} : { tls: Object.freeze({ ...c.tls }) }),
  });
}
