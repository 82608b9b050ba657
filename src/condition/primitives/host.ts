/**
 * Host primitives (reference bfe.md §1.6 "Host"). The request's host is already lower-cased with
 * the port and one trailing dot removed, so host lists are folded to lower case at build time.
 */
import { listMatcher, onValue, str } from './matchers.ts';
import { regexMatcher } from './regex.ts';
import { type Condition, type PrimitiveTable, params } from './types.ts';

/** A `|` list of hosts without ports (an IPv6 literal keeps its brackets), lower-cased. */
function hostList(list: string, fail: (message: string) => never): string {
  for (const host of list.split('|')) {
    const bare = host.startsWith('[') && host.endsWith(']') ? '' : host;
    if (bare.includes(':')) fail(`port should not be included in host "${host}"`);
  }
  return list.toLowerCase();
}

/** Parses a `|` list of ports into a set, failing on anything but 1–65535. */
function portSet(list: string, fail: (message: string) => never): Set<number> {
  const ports = new Set<number>();
  for (const p of list.split('|')) {
    if (!/^[1-9][0-9]{0,4}$/.test(p) || Number(p) > 65535) fail(`bad port "${p}": expected 1-65535`);
    ports.add(Number(p));
  }
  return ports;
}

/** Host, host tag and port primitives. */
export const hostPrimitives: PrimitiveTable = {
  req_host_in: {
    params: params('S:hosts'),
    build: (a, ctx) =>
      onValue(
        (r) => r.host,
        listMatcher(
          'in',
          hostList(str(a, 0), (m) => ctx.fail(0, m)),
          false,
        ),
      ),
  },
  req_host_regmatch: {
    params: params('S:regex'),
    build: (a, ctx) => onValue((r) => r.host, regexMatcher(str(a, 0), ctx, 0)),
  },
  req_host_suffix_in: {
    params: params('S:suffixes'),
    build: (a) => onValue((r) => r.host, listMatcher('suffix', str(a, 0).toLowerCase(), false)),
  },
  req_host_tag_in: {
    params: params('S:tags'),
    build: (a, ctx): Condition => {
      const hostTag = ctx.hostTag;
      if (hostTag === undefined) return () => false;
      return onValue((r) => hostTag(r.host), listMatcher('in', str(a, 0), true));
    },
  },
  req_port_in: {
    params: params('S:ports'),
    build: (a, ctx): Condition => {
      const ports = portSet(str(a, 0), (m) => ctx.fail(0, m));
      // BFE: no port in Host means 80, even on HTTPS (reference §1.6).
      return (r) => ports.has(r.port ?? 80);
    },
  },
};
