/**
 * Path and URL primitives (reference bfe.md §1.6 "Path / URL"). The path is the normalised path
 * (undefined on TLS passthrough: every path primitive is then false); the URL regex sees the
 * request-target as sent.
 */
import { bool, type ListKind, listMatcher, onValue, str } from './matchers.ts';
import { regexMatcher } from './regex.ts';
import { type Primitive, type PrimitiveTable, params } from './types.ts';

/** A `(list, fold)` path primitive of one list kind. */
function pathList(kind: ListKind): Primitive {
  return {
    params: params('S:list', 'B:fold'),
    build: (a) => onValue((r) => r.path, listMatcher(kind, str(a, 0), bool(a, 1))),
  };
}

/** Path and URL primitives. */
export const pathPrimitives: PrimitiveTable = {
  req_path_in: pathList('in'),
  req_path_prefix_in: pathList('prefix'),
  req_path_suffix_in: pathList('suffix'),
  req_path_contain: pathList('contain'),
  req_path_element_prefix_in: pathList('element'),
  req_path_regmatch: {
    params: params('S:regex'),
    build: (a, ctx) => onValue((r) => r.path, regexMatcher(str(a, 0), ctx, 0)),
  },
  req_url_regmatch: {
    params: params('S:regex'),
    build: (a, ctx) => onValue((r) => r.target, regexMatcher(str(a, 0), ctx, 0)),
  },
};
