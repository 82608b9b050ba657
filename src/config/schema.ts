/**
 * The top-level config schema (DESIGN "Config contract (v1)"), in zod 4: strict objects so
 * unknown keys are errors, defaults applied, durations parsed to milliseconds. The options of the
 * operator and the address book are validated by their own plugin's schema (src/config/load.ts).
 */
import { z } from 'zod';
import { listenAddress } from './address.ts';
import { duration } from './duration.ts';

const cidr = z.string().regex(/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/, 'expected an IP address or CIDR like 10.0.0.0/8');

export const listenerSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'expected a name of letters, digits, _ . -'),
  address: listenAddress,
  proxyProtocol: z.enum(['off', 'v1', 'v2', 'any']).default('off'),
  trustedSources: z.array(cidr).default([]),
  tls: z.enum(['off', 'passthrough', 'terminate']).default('off'),
  certificates: z.array(z.strictObject({ cert: z.string(), key: z.string() })).default([]),
  allowConnect: z.boolean().default(false),
});

export const limitsSchema = z.strictObject({
  peekTimeout: duration.default(10_000),
  maxHeaderBytes: z.number().int().min(1024).max(1_048_576).default(16_384),
  connectTimeout: duration.default(2_000),
  idleTimeout: duration.default(60_000),
  drainTimeout: duration.default(30_000),
  maxConnections: z.number().int().min(1).default(4096),
  maxConnectionsPerClient: z.number().int().min(0).default(0),
});

/** `{ name, ...options }`: the options are checked later against the plugin's own schema. */
const pluginRef = (defaultName: string) =>
  z
    .union([z.string(), z.looseObject({ name: z.string().min(1) })])
    .default(defaultName)
    .transform((v) => (typeof v === 'string' ? { name: v } : v) as { name: string; [k: string]: unknown });

export const panelSchema = z
  .union([
    z.string(),
    z.strictObject({
      name: z.string(),
      threads: z.number().int().min(1).max(256).optional(),
      engine: z.enum(['net', 'http2']).default('net'),
    }),
  ])
  .default('net')
  .transform((v) => (typeof v === 'string' ? { name: v, engine: 'net' as const } : v));

export const configSchema = z
  .strictObject({
    panel: panelSchema,
    listeners: z.array(listenerSchema).min(1, 'expected at least one listener'),
    routing: z.enum(['per-connection', 'per-request']).default('per-connection'),
    limits: limitsSchema.default(limitsSchema.parse({})),
    operator: pluginRef('bfe'),
    addressBook: pluginRef('bfe'),
    admin: z
      .strictObject({
        address: listenAddress.default({ host: '127.0.0.1', port: 9901 }),
        token: z.string().default(''),
      })
      .optional(),
    log: z
      .strictObject({
        level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
        access: z.string().default('stdout'),
      })
      .default({ level: 'info', access: 'stdout' }),
  })
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.listeners.forEach((l, i) => {
      if (l.proxyProtocol !== 'off' && l.trustedSources.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['listeners', i, 'trustedSources'],
          message: `proxyProtocol ${l.proxyProtocol} needs trustedSources (the CIDRs allowed to send PROXY headers)`,
        });
      }
      if (seen.has(l.name))
        ctx.addIssue({ code: 'custom', path: ['listeners', i, 'name'], message: 'duplicate listener name' });
      seen.add(l.name);
    });
  });

export type Config = z.output<typeof configSchema>;
export type ListenerConfig = z.output<typeof listenerSchema>;
export type Limits = z.output<typeof limitsSchema>;
export type PluginRef = Config['operator'];
