/**
 * Client-address, VIP and socket primitives (reference bfe.md §1.6 "Client IP / VIP / socket").
 * Addresses and ranges are parsed at build time into 16-byte forms; evaluation parses the
 * request's address into a shared buffer, so it allocates nothing (see src/base/ip.ts for the rules).
 */
import {
  type Cidr,
  cidrContainsBytes,
  compareIpBytes,
  formatIpBytes,
  type IpFamily,
  parseCidr,
  parseIp,
  parseIpInto,
} from '../../base/ip.ts';
import type { Request } from '../../contracts/types.ts';
import { hashMatcher, str } from './matchers.ts';
import type { BuildContext, Condition, Primitive, PrimitiveTable } from './types.ts';
import { params } from './types.ts';

const scratch = new Uint8Array(16);

/** A `(start, end)` inclusive range over the address `fetch` returns. */
function range(fetch: (r: Request) => string | undefined): Primitive {
  return {
    params: params('S:start', 'S:end'),
    build: (a, ctx): Condition => {
      const from = ip(str(a, 0), ctx, 0);
      const to = ip(str(a, 1), ctx, 1);
      if (from.family !== to.family) ctx.fail(1, `range mixes IPv${from.family} and IPv${to.family}`);
      if (compareIpBytes(from.bytes, to.bytes) > 0) ctx.fail(1, `range start ${from.text} is after end ${to.text}`);
      const family = from.family;
      return (r) => {
        const text = fetch(r);
        if (text === undefined || parseIpInto(text, scratch) !== family) return false;
        return compareIpBytes(from.bytes, scratch) <= 0 && compareIpBytes(scratch, to.bytes) <= 0;
      };
    },
  };
}

/**
 * Ours: any of a `|` list of CIDR blocks (or bare addresses) holds the address `fetch` returns;
 * IPv4 and IPv6 never mix (src/base/ip.ts rule 3).
 */
function cidrIn(fetch: (r: Request) => string | undefined): Primitive {
  return {
    params: params('S:cidrs'),
    build: (a, ctx): Condition => {
      const blocks: Cidr[] = str(a, 0)
        .split('|')
        .map((t) => parseCidr(t) ?? ctx.fail(0, `bad CIDR "${t}" (expected addr/prefix or an address)`));
      return (r) => {
        const text = fetch(r);
        if (text === undefined) return false;
        const family = parseIpInto(text, scratch);
        if (family === 0) return false;
        for (let i = 0; i < blocks.length; i++) if (cidrContainsBytes(blocks[i] as Cidr, scratch, family)) return true;
        return false;
      };
    },
  };
}

/** Parses an address argument or fails at it. */
function ip(text: string, ctx: BuildContext, index: number): { family: IpFamily; bytes: Uint8Array; text: string } {
  return parseIp(text) ?? ctx.fail(index, `bad IP address "${text}"`);
}

/** Client, VIP and socket-address primitives. */
export const netPrimitives: PrimitiveTable = {
  req_cip_range: range((r) => r.clientIp),
  // The session source: the PROXY source when a header gave one, else the peer; never a
  // forwarded header (clientIpFrom: header changes clientIp, not this).
  ses_sip_range: range((r) => r.sessionIp ?? r.clientIp),
  req_cip_cidr_in: cidrIn((r) => r.clientIp),
  ses_sip_cidr_in: cidrIn((r) => r.sessionIp ?? r.clientIp),
  req_vip_range: range((r) => r.vip),
  ses_vip_range: range((r) => r.vip),
  req_cip_trusted: { params: [], build: (): Condition => (r) => r.trustedClient },
  req_cip_hash_in: {
    params: params('S:buckets'),
    build: (a, ctx): Condition => {
      // BFE hashes the address's string form (Go's IP.String(): dotted IPv4, RFC 5952 IPv6).
      const match = hashMatcher(str(a, 0), false, ctx, 0);
      return (r) => {
        const family = parseIpInto(r.clientIp, scratch);
        return family !== 0 && match(formatIpBytes(scratch, family));
      };
    },
  },
  req_vip_in: {
    params: params('S:ips'),
    build: (a, ctx): Condition => {
      const ips = str(a, 0)
        .split('|')
        .map((t) => ip(t, ctx, 0));
      return (r) => {
        if (r.vip === undefined) return false;
        const family = parseIpInto(r.vip, scratch);
        for (const want of ips) if (want.family === family && compareIpBytes(want.bytes, scratch) === 0) return true;
        return false;
      };
    },
  },
};
