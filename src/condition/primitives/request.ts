/**
 * Method and protocol primitives and `default_t` (reference bfe.md §1.6 "Method / protocol").
 */
import type { Request } from '../../contracts/types.ts';
import { listMatcher, onValue, str } from './matchers.ts';
import { type Condition, type PrimitiveTable, params } from './types.ts';

/**
 * The protocol value BFE's `req_proto_match` sees: the session protocol on TLS (`h2`, else
 * `https`), the HTTP version on plaintext. The Request has no HTTP/1 minor version, so plaintext
 * HTTP/1 reads as `HTTP/1.1`.
 */
export function protoValue(r: Request): string {
  if (r.secure) return r.protocol === 'h2' ? 'h2' : 'https';
  return r.protocol === 'h2c' ? 'HTTP/2.0' : 'HTTP/1.1';
}

/** Method, protocol and catch-all primitives. */
export const requestPrimitives: PrimitiveTable = {
  req_method_in: {
    params: params('S:methods'),
    build: (a) => onValue((r) => r.method, listMatcher('in', str(a, 0), true)),
  },
  req_proto_match: {
    params: params('S:protocol'),
    build: (a): Condition => {
      // Whole-string, case-insensitive, not a list (despite BFE's doc example "https|h2").
      const want = str(a, 0).toLowerCase();
      return (r) => protoValue(r).toLowerCase() === want;
    },
  },
  req_proto_secure: { params: [], build: (): Condition => (r) => r.secure },
  default_t: { params: [], build: (): Condition => () => true },
};
