/**
 * `consistent-hash`: a weighted hash ring with bounded load inside the sub-cluster GSLB chose.
 * Removing one of N backends moves about 1/N of the keys; with `balanceFactor` no backend takes
 * more than `balanceFactor` × its weighted share of the active connections (+1).
 *
 *   operator: { name: consistent-hash, key: header, header: X-User, balanceFactor: 1.25 }
 */
import { z } from 'zod';
import { ipHashBytes } from '../src/base/ip.ts';
import { murmur3First64 } from '../src/base/murmur3.ts';
import { randomInt } from '../src/base/random.ts';
import type { OperatorFactory, OperatorInstance, PluginContext } from '../src/contracts/plugin.ts';
import type { Request } from '../src/contracts/types.ts';
import type { BackendPicker } from '../src/routing/gslb.ts';
import { memo, operatorOf } from './lib/operator.ts';
import { type Pool, poolOf } from './lib/pool.ts';
import { buildRing, type Ring, ringPick } from './lib/ring.ts';

/** Options of `consistent-hash`. */
export const consistentHashOptions = z
  .strictObject({
    key: z.enum(['client-ip', 'header', 'cookie', 'host', 'path']).default('client-ip'),
    header: z.string().min(1).optional(),
    cookie: z.string().min(1).optional(),
    /** Bound on a backend's load relative to its share; 0 turns bounded load off. */
    balanceFactor: z
      .number()
      .refine((f) => f === 0 || f >= 1, 'must be 0 (off) or ≥ 1')
      .default(1.25),
    /** Ring points for a backend of mean weight. */
    replicas: z.number().int().min(1).max(10_000).default(160),
  })
  .superRefine((o, ctx) => {
    if (o.key === 'header' && o.header === undefined) {
      ctx.addIssue({ code: 'custom', path: ['header'], message: 'key header needs a header name' });
    }
    if (o.key === 'cookie' && o.cookie === undefined) {
      ctx.addIssue({ code: 'custom', path: ['cookie'], message: 'key cookie needs a cookie name' });
    }
  });

/** Parsed options of `consistent-hash`. */
export type ConsistentHashOptions = z.output<typeof consistentHashOptions>;

/** The text or bytes the ring position comes from; undefined or empty → a random position. */
function keyOf(request: Request, o: ConsistentHashOptions): Uint8Array | undefined {
  let text: string | undefined;
  switch (o.key) {
    case 'client-ip':
      return request.clientIp === '' ? undefined : ipHashBytes(request.clientIp);
    case 'header':
      text = request.header(o.header!);
      break;
    case 'cookie':
      text = request.cookie(o.cookie!);
      break;
    case 'host':
      text = request.host;
      break;
    case 'path':
      text = request.path;
      break;
  }
  return text === undefined || text === '' ? undefined : Buffer.from(text, 'utf8');
}

/** The `consistent-hash` operator factory. */
export const consistentHash = {
  name: 'consistent-hash',
  options: consistentHashOptions,
  create(options: ConsistentHashOptions, ctx: PluginContext): OperatorInstance {
    const o = consistentHashOptions.parse(options);
    const { registry } = ctx;
    const rings = new WeakMap<Pool, Ring>();
    const build = (pool: Pool) => buildRing(pool, o.replicas);
    const picker: BackendPicker = {
      pick(sub, request, candidates, exclude) {
        const pool = poolOf(registry, sub, candidates.cluster);
        const key = keyOf(request, o);
        const position = key === undefined ? randomInt(ctx.random, 4294967296) : murmur3First64(key)[0];
        const i = ringPick(pool, memo(rings, pool, build), position, exclude, o.balanceFactor);
        return i < 0 ? undefined : pool.jacks[i];
      },
    };
    return operatorOf(picker, ctx.random);
  },
} satisfies OperatorFactory;
