/**
 * The `file` book's matcher, built once per snapshot:
 *
 *   host  ──exact map──► paths        most specific host level first:
 *         ──*.suffix──►  paths          exact, then the deepest `*.` wildcard (any depth), then `*`
 *         ──*──────────► paths        at each level the longest path prefix wins; a level whose
 *                                       prefixes all miss falls through to the next level
 *
 * Path prefixes are segment-aware: `/api` matches `/api` and `/api/x`, not `/apix`.
 */
import { formatHostPort } from '../../src/config/address.ts';
import { toPolicy } from '../../src/config/cluster.ts';
import type { Backend, Candidates } from '../../src/contracts/types.ts';
import type { FileEntry } from './parse.ts';

interface PathRoute {
  readonly prefix: string;
  readonly candidates: Candidates;
}

export interface FileMatcher {
  match(host: string, path: string | undefined): Candidates | undefined;
  /** Every entry's candidates, in file order. */
  readonly all: readonly Candidates[];
}

function toCandidates(e: FileEntry, index: number): Candidates {
  const backends: Backend[] = e.backends.map((b) => {
    const hp = 'address' in b ? b.address : b;
    const weight = 'address' in b ? b.weight : 1;
    const id = formatHostPort(hp.host, hp.port);
    return Object.freeze({ id, host: hp.host, port: hp.port, weight, name: id });
  });
  const name = `${e.host}${e.path ?? ''}`;
  return Object.freeze({
    product: e.host,
    cluster: name,
    policy: toPolicy(e),
    subclusters: Object.freeze([Object.freeze({ name: 'default', weight: 1, backends: Object.freeze(backends) })]),
    rule: `[${index}]`,
  });
}

function pathMatches(prefix: string, path: string): boolean {
  if (prefix === '/' || prefix === '') return true;
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || prefix.endsWith('/') || path[prefix.length] === '/';
}

function firstPath(routes: readonly PathRoute[] | undefined, path: string | undefined): Candidates | undefined {
  if (routes === undefined) return undefined;
  for (const r of routes) {
    // TLS passthrough has no path: only entries without a path prefix apply.
    if (path === undefined ? r.prefix === '' : pathMatches(r.prefix, path)) return r.candidates;
  }
  return undefined;
}

/** Builds the matcher for a list of entries (precomputed; lookups allocate nothing but suffix slices). */
export function buildMatcher(entries: readonly FileEntry[]): FileMatcher {
  const exact = new Map<string, PathRoute[]>();
  const wild = new Map<string, PathRoute[]>();
  let any: PathRoute[] | undefined;
  const all: Candidates[] = [];
  entries.forEach((e, i) => {
    const route = { prefix: e.path ?? '', candidates: toCandidates(e, i) };
    all.push(route.candidates);
    let list: PathRoute[];
    if (e.host === '*') list = any ??= [];
    else if (e.host.startsWith('*.')) list = getOrCreate(wild, e.host.slice(2));
    else list = getOrCreate(exact, e.host);
    list.push(route);
  });
  // Longest prefix first, so the first hit is the most specific.
  for (const list of [...exact.values(), ...wild.values(), any ?? []])
    list.sort((a, b) => b.prefix.length - a.prefix.length);
  return {
    all: Object.freeze(all),
    match(host, path) {
      const hit = firstPath(exact.get(host), path);
      if (hit !== undefined) return hit;
      for (let dot = host.indexOf('.'); dot >= 0; dot = host.indexOf('.', dot + 1)) {
        const found = firstPath(wild.get(host.slice(dot + 1)), path);
        if (found !== undefined) return found;
      }
      return firstPath(any, path);
    },
  };
}

function getOrCreate<K, V>(map: Map<K, V[]>, key: K): V[] {
  let v = map.get(key);
  if (v === undefined) {
    v = [];
    map.set(key, v);
  }
  return v;
}
