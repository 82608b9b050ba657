/**
 * Query primitives (reference bfe.md §1.6 "Query"): keys are case-sensitive, `*_value_*` use the
 * first value, and a missing key fetches "" (so a list holding "" matches an absent key).
 */
import type { Request } from '../../contracts/types.ts';
import { bool, hashMatcher, type ListKind, listMatcher, onValue, str } from './matchers.ts';
import { regexMatcher } from './regex.ts';
import { type Condition, type Primitive, type PrimitiveTable, params } from './types.ts';

/**
 * Calls `test` on each key of a raw query string as Go's `url.ParseQuery` sees it: parts split on
 * '&', empty parts and parts holding ';' skipped, keys percent-decoded ('+' is a space), keys
 * that fail to decode skipped. Returns true as soon as `test` does.
 */
export function someQueryKey(query: string, test: (key: string) => boolean): boolean {
  let from = 0;
  while (from < query.length) {
    let to = query.indexOf('&', from);
    if (to < 0) to = query.length;
    if (to > from) {
      const eq = query.indexOf('=', from);
      const keyEnd = eq >= 0 && eq < to ? eq : to;
      const part = query.slice(from, to);
      if (!part.includes(';')) {
        const key = decodeKey(query.slice(from, keyEnd));
        if (key !== undefined && test(key)) return true;
      }
    }
    from = to + 1;
  }
  return false;
}

/** Percent-decodes a query key, or undefined when malformed. */
function decodeKey(raw: string): string | undefined {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** The first value of a query key, "" when absent. */
function queryValue(key: string): (r: Request) => string {
  return (r) => r.queryParam(key) ?? '';
}

/** A `(key, list, fold)` query-value primitive of one list kind. */
function valueList(kind: ListKind): Primitive {
  return {
    params: params('S:key', 'S:list', 'B:fold'),
    build: (a) => onValue(queryValue(str(a, 0)), listMatcher(kind, str(a, 1), bool(a, 2))),
  };
}

/** Query primitives. */
export const queryPrimitives: PrimitiveTable = {
  req_query_key_in: {
    params: params('S:keys'),
    build: (a): Condition => {
      const keys = str(a, 0).split('|');
      return (r) => {
        for (let i = 0; i < keys.length; i++) if (r.queryParam(keys[i] as string) !== undefined) return true;
        return false;
      };
    },
  },
  req_query_key_prefix_in: {
    params: params('S:prefixes'),
    build: (a): Condition => {
      const match = listMatcher('prefix', str(a, 0), false);
      return (r) => someQueryKey(r.query, match);
    },
  },
  req_query_exist: {
    params: [],
    build: (): Condition => {
      const any = (): boolean => true;
      return (r) => someQueryKey(r.query, any);
    },
  },
  req_query_value_in: valueList('in'),
  req_query_value_prefix_in: valueList('prefix'),
  req_query_value_suffix_in: valueList('suffix'),
  req_query_value_contain: valueList('contain'),
  req_query_value_regmatch: {
    params: params('S:key', 'S:regex'),
    build: (a, ctx) => onValue(queryValue(str(a, 0)), regexMatcher(str(a, 1), ctx, 1)),
  },
  req_query_value_hash_in: {
    params: params('S:key', 'S:buckets', 'B:fold'),
    build: (a, ctx) => onValue(queryValue(str(a, 0)), hashMatcher(str(a, 1), bool(a, 2), ctx, 1)),
  },
};
