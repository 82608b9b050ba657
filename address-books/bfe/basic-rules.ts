/**
 * The basic rule tree of one product (reference bfe.md §3.3, §4.2a): host first, then path.
 *
 *   host:  exact ──miss──► one-label "*.suffix" ──miss──► bare "*"      (no fallback once chosen)
 *   path:  exact ──miss──► longest segment prefix ("/foo*" ≡ "/foo/") ──miss──► bare "*"
 *
 * A hit whose cluster is ADVANCED_MODE (or a miss) hands over to the advanced rules.
 */
import type { Candidates } from '../../src/contracts/types.ts';

/** The cluster name that means "continue with the advanced rules". */
export const ADVANCED_MODE = 'ADVANCED_MODE';

/** What a path pattern resolves to; `candidates` is undefined for ADVANCED_MODE. */
export interface PathTarget {
  /** The path as configured (`/static/*`). */
  readonly pattern: string;
  readonly cluster: string;
  /** Config path of the rule (`products.web.basicRules[0]`). */
  readonly rule: string;
  readonly candidates: Candidates | undefined;
}

/** A parsed path pattern: exact key, or a prefix key ending in `/` ('' for a bare `*`). */
export type PathKey = { readonly exact: string } | { readonly prefix: string };

/** Checks and converts a configured path; a string is an error text. */
export function parsePathPattern(raw: string): PathKey | string {
  if (raw === '') return 'path must not be empty';
  const star = raw.indexOf('*');
  if (star < 0) return { exact: raw };
  if (star !== raw.length - 1) return `* may only be the last character of a path, got ${raw}`;
  const head = raw.slice(0, -1);
  return { prefix: head === '' || head.endsWith('/') ? head : `${head}/` };
}

/**
 * Path matching for one host: exact paths and segment-aware prefixes. A prefix `/foo/` is
 * stored without its trailing slash (`/foo`), so the candidates for a request path are the path
 * itself and each of its slices that ends before a `/` — the first candidate is the request's own
 * string (hash cached, no allocation).
 */
export class PathTree {
  readonly #exact = new Map<string, PathTarget>();
  readonly #prefix = new Map<string, PathTarget>();
  #any: PathTarget | undefined;

  /** Adds a pattern; returns the target it collides with (nothing is replaced). */
  add(key: PathKey, target: PathTarget): PathTarget | undefined {
    if ('prefix' in key && key.prefix === '') {
      if (this.#any !== undefined) return this.#any;
      this.#any = target;
      return undefined;
    }
    const [map, k] = 'exact' in key ? [this.#exact, key.exact] : [this.#prefix, key.prefix.slice(0, -1)];
    const existing = map.get(k);
    if (existing !== undefined) return existing;
    map.set(k, target);
    return undefined;
  }

  /** The target for a request path; without a path (TLS) only a bare `*` matches. */
  lookup(path: string | undefined): PathTarget | undefined {
    if (path === undefined) return this.#any;
    const hit = this.#exact.get(path);
    if (hit !== undefined) return hit;
    const prefix = this.#prefix;
    if (prefix.size > 0) {
      // "/a/b" tries "/a/b", "/a", ""; "/a/b/" tries "/a/b", "/a", "".
      let end = path.length;
      if (path.charCodeAt(end - 1) !== 47) {
        const t = prefix.get(path);
        if (t !== undefined) return t;
      } else {
        end--;
        const t = prefix.get(path.slice(0, end));
        if (t !== undefined) return t;
      }
      let slash = end > 0 ? path.lastIndexOf('/', end - 1) : -1;
      while (slash >= 0) {
        const t = prefix.get(path.slice(0, slash));
        if (t !== undefined) return t;
        slash = slash > 0 ? path.lastIndexOf('/', slash - 1) : -1;
      }
    }
    return this.#any;
  }
}

/** The host node chosen for a request: its pattern and its path tree. */
export interface HostNode {
  readonly pattern: string;
  readonly paths: PathTree;
}

/** The host level of the basic rule tree of one product. */
export class BasicRuleTree {
  readonly #exact = new Map<string, HostNode>();
  /** Keyed by the suffix after `*.`. */
  readonly #wildcard = new Map<string, HostNode>();
  #star: HostNode | undefined;

  /** The path tree of a normalised host pattern, created on first use. */
  pathsFor(pattern: string): PathTree {
    if (pattern === '*') {
      this.#star ??= { pattern, paths: new PathTree() };
      return this.#star.paths;
    }
    const [map, key] = pattern.startsWith('*.') ? [this.#wildcard, pattern.slice(2)] : [this.#exact, pattern];
    let node = map.get(key);
    if (node === undefined) {
      node = { pattern, paths: new PathTree() };
      map.set(key, node);
    }
    return node.paths;
  }

  /** The most specific host node for a request host: exact, one-label wildcard, then `*`. */
  lookupHost(host: string): HostNode | undefined {
    const exact = this.#exact.get(host);
    if (exact !== undefined) return exact;
    if (this.#wildcard.size > 0) {
      const dot = host.indexOf('.');
      if (dot >= 0) {
        const node = this.#wildcard.get(host.slice(dot + 1));
        if (node !== undefined) return node;
      }
    }
    return this.#star;
  }

  /** Host node then path: the target, or undefined on a miss. */
  lookup(host: string, path: string | undefined): PathTarget | undefined {
    return this.lookupHost(host)?.paths.lookup(path);
  }
}
