/**
 * The schema of the top-level `fleet:` section (issue 43, docs/fleet.md): several routers acting
 * as one through etcd (membership, later certificates and backend state) and Redis (later:
 * fleet-wide counters). Absent: nothing changes, and neither etcd nor Redis is loaded.
 *
 *   fleet:
 *     id: edge-1                       # default: hostname + the first listener's address
 *     leaseTtl: 10s
 *     etcd: { endpoints: [http://127.0.0.1:2379], prefix: /switchboard/fleet/ }
 *     redis: { url: redis://127.0.0.1:6379, timeout: 50ms }
 *
 * The config only declares it; app/fleet/ runs it.
 */
import { z } from 'zod';
import { duration } from './duration.ts';
import { notSecret } from './not-secret.ts';

/** An etcd endpoint: `http://host:port` or `https://host:port`. */
const endpoint = z.string().regex(/^https?:\/\/[^/\s]+\/?$/, 'expected an etcd endpoint like http://127.0.0.1:2379');

/** `fleet.etcd`: where etcd is, the key prefix, TLS and password auth. */
const etcdSchema = z.strictObject({
  endpoints: z.union([endpoint, z.array(endpoint).min(1, 'expected at least one etcd endpoint')]),
  /** Every fleet key lives under it; it must end with `/`. */
  prefix: z
    .string()
    .regex(/^\/.*\/$/, 'expected a key prefix that starts and ends with /, like /switchboard/fleet/')
    .default('/switchboard/fleet/'),
  /** How long one etcd call may take before it counts as unreachable. */
  dialTimeout: duration.default(2000),
  /** TLS to etcd (https:// endpoints): the CA to trust, and a client certificate if etcd asks for one. */
  tls: z
    .strictObject({
      ca: z.string().min(1),
      cert: z.string().min(1).optional(),
      key: notSecret(z.string().min(1).optional()),
    })
    .refine((t) => (t.cert === undefined) === (t.key === undefined), {
      message: 'cert and key go together (a client certificate needs its key)',
    })
    .optional(),
  /** etcd's password auth (a user with read and write on the prefix). */
  auth: z.strictObject({ username: z.string().min(1), password: z.string().meta({ writeOnly: true }) }).optional(),
});

/** `fleet.redis`: the shared counters' server (used by `scope: fleet` limits). */
const redisSchema = z.strictObject({
  url: z.string().regex(/^rediss?:\/\/\S+$/, 'expected a Redis URL like redis://127.0.0.1:6379'),
  /** The longest a decision waits for Redis before the fail mode applies. */
  timeout: duration.default(50),
});

export const fleetSchema = z
  .strictObject({
    /** This router's member id; default: hostname + the first listener's bound address. */
    id: z
      .string()
      .regex(/^[A-Za-z0-9._:@[\]-]{1,128}$/, 'expected an id of letters, digits and . _ : @ [ ] - (at most 128)')
      .optional(),
    /** The membership lease: a router gone without a word disappears after this long. */
    leaseTtl: duration.default(10_000),
    etcd: etcdSchema,
    redis: redisSchema.optional(),
    /**
     * The key that encrypts ACME private keys in etcd (AES-256-GCM, app/acme/fleet-crypto.ts):
     * 32 bytes, base64; the same on every router. Required with `acme:` sections.
     */
    encryptionKey: z.string().min(1).meta({ writeOnly: true }).optional(),
    /** Or a file holding that key (base64), relative to the config file. */
    encryptionKeyFile: notSecret(z.string().min(1).optional()),
  })
  .superRefine((f, ctx) => {
    if (f.leaseTtl < 2000 || f.leaseTtl % 1000 !== 0)
      ctx.addIssue({
        code: 'custom',
        path: ['leaseTtl'],
        message: 'expected whole seconds, at least 2s (etcd leases)',
      });
    if (f.redis !== undefined && (f.redis.timeout < 1 || f.redis.timeout > 5000))
      ctx.addIssue({ code: 'custom', path: ['redis', 'timeout'], message: 'expected between 1ms and 5s' });
    if (f.encryptionKey !== undefined && f.encryptionKeyFile !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['encryptionKeyFile'],
        message: 'set encryptionKey or encryptionKeyFile, not both',
      });
    if (f.etcd.dialTimeout < 100)
      ctx.addIssue({ code: 'custom', path: ['etcd', 'dialTimeout'], message: 'expected at least 100ms' });
  });

export type FleetConfig = z.output<typeof fleetSchema>;
