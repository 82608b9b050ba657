/**
 * Header and cookie primitives (reference bfe.md §1.6 "Header", "Cookie"). Header names are
 * case-insensitive and the first value is used; a missing header fetches "" while a missing
 * cookie is a failed fetch (false).
 */
import type { Request } from '../../contracts/types.ts';
import { bool, hashMatcher, type ListKind, listMatcher, onValue, str } from './matchers.ts';
import { regexMatcher } from './regex.ts';
import { type Condition, type Primitive, type PrimitiveTable, params } from './types.ts';

/** The first value of a header, "" when absent. */
function headerValue(name: string): (r: Request) => string {
  return (r) => r.header(name) ?? '';
}

/** The value of a cookie, undefined (fetch failed) when absent. */
function cookieValue(name: string): (r: Request) => string | undefined {
  return (r) => r.cookie(name);
}

/** A `(name, list, fold)` primitive of one list kind over a fetched value. */
function valueList(kind: ListKind, fetch: (name: string) => (r: Request) => string | undefined): Primitive {
  return {
    params: params('S:name', 'S:list', 'B:fold'),
    build: (a) => onValue(fetch(str(a, 0)), listMatcher(kind, str(a, 1), bool(a, 2))),
  };
}

/** A `(name, buckets, fold)` hash primitive over a fetched value. */
function valueHash(fetch: (name: string) => (r: Request) => string | undefined): Primitive {
  return {
    params: params('S:name', 'S:buckets', 'B:fold'),
    build: (a, ctx) => onValue(fetch(str(a, 0)), hashMatcher(str(a, 1), bool(a, 2), ctx, 1)),
  };
}

/** Header, user-agent and cookie primitives. */
export const headerPrimitives: PrimitiveTable = {
  req_header_key_in: {
    params: params('S:names'),
    build: (a): Condition => {
      const names = str(a, 0).split('|');
      // A header present but empty counts as absent (BFE).
      return (r) => {
        for (let i = 0; i < names.length; i++) if (r.header(names[i] as string)) return true;
        return false;
      };
    },
  },
  req_header_value_in: valueList('in', headerValue),
  req_header_value_prefix_in: valueList('prefix', headerValue),
  req_header_value_suffix_in: valueList('suffix', headerValue),
  req_header_value_contain: valueList('contain', headerValue),
  req_header_value_regmatch: {
    params: params('S:name', 'S:regex'),
    build: (a, ctx) => onValue(headerValue(str(a, 0)), regexMatcher(str(a, 1), ctx, 1)),
  },
  req_header_value_hash_in: valueHash(headerValue),
  req_ua_regmatch: {
    params: params('S:regex'),
    build: (a, ctx) => onValue(headerValue('user-agent'), regexMatcher(str(a, 0), ctx, 0)),
  },
  req_cookie_key_in: {
    params: params('S:names'),
    build: (a): Condition => {
      const names = str(a, 0).split('|');
      return (r) => {
        for (let i = 0; i < names.length; i++) if (r.cookie(names[i] as string) !== undefined) return true;
        return false;
      };
    },
  },
  req_cookie_value_in: valueList('in', cookieValue),
  req_cookie_value_prefix_in: valueList('prefix', cookieValue),
  req_cookie_value_suffix_in: valueList('suffix', cookieValue),
  req_cookie_value_contain: valueList('contain', cookieValue),
  req_cookie_value_hash_in: valueHash(cookieValue),
};
