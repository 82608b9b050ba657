/**
 * What a counting policy (rate-limit, in-flight) counts by: `key: client-ip | header | host |
 * product | cluster | rule`, and the earliest point that knows it.
 *
 * 1. `client-ip`: the client address (the PROXY source, or a trusted forwarded header's from the
 *    request point on), IPv6 aggregated to its first `ipv6Prefix` bits (default 64: one host is
 *    usually given a whole /64), IPv4-mapped IPv6 as IPv4 (src/listener/client-key.ts).
 * 2. `header` (with `header: NAME`): that header's first value; requests without it share one
 *    count (the empty key), so leaving the header out is no way around the limit.
 * 3. `host`: the request's host; `product`, `cluster`: what routing chose (`routed` point).
 * 4. `rule`: one count for everything the rule sees.
 */
import { z } from 'zod';
import type { PointContext, PolicyPoint } from '../../src/contracts/policy.ts';
import { clientKey } from '../../src/listener/client-key.ts';

/** The key options shared by rate-limit and in-flight. */
export const keyOptions = {
  key: z.enum(['client-ip', 'header', 'host', 'product', 'cluster', 'rule']).default('client-ip'),
  /** The header counted by, with `key: header`. */
  header: z.string().min(1).optional(),
  /** IPv6 client addresses count by this many leading bits. */
  ipv6Prefix: z.number().int().min(1).max(128).default(64),
};

/** The parsed key options. */
export interface KeySpec {
  readonly key: 'client-ip' | 'header' | 'host' | 'product' | 'cluster' | 'rule';
  readonly header?: string | undefined;
  readonly ipv6Prefix: number;
}

/** Refines an options schema: `header` goes with `key: header` and only with it. */
export function checkKeyHeader(o: KeySpec, ctx: z.RefinementCtx): void {
  if (o.key === 'header' && o.header === undefined)
    ctx.addIssue({ code: 'custom', path: ['header'], message: 'key header needs header: NAME' });
  if (o.key !== 'header' && o.header !== undefined)
    ctx.addIssue({ code: 'custom', path: ['header'], message: `header is for key: header, not key: ${o.key}` });
}

/** The earliest point that knows the key. */
export function keyPoint(spec: KeySpec): PolicyPoint {
  if (spec.key === 'header' || spec.key === 'host') return 'request';
  if (spec.key === 'product' || spec.key === 'cluster') return 'routed';
  return 'connection';
}

/** The key of what `ctx` describes (the rule's point knows it: checked at compile). */
export function keyOf(spec: KeySpec, ctx: PointContext): string {
  switch (spec.key) {
    case 'client-ip':
      return clientKey(ctx.request?.clientIp ?? ctx.connection.clientIp, spec.ipv6Prefix);
    case 'header':
      return ctx.request?.header(spec.header ?? '') ?? '';
    case 'host':
      return ctx.request?.host ?? '';
    case 'product':
      return ctx.product ?? '';
    case 'cluster':
      return ctx.cluster ?? '';
    case 'rule':
      return '';
  }
}
