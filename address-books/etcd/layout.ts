/**
 * The etcd key layout (README.md): one key per product, cluster and backend under a prefix.
 *
 *   {prefix}defaultProduct                          web
 *   {prefix}conditions/{name}                       req_header_value_in("X-Canary", "1", false)
 *   {prefix}products/{name}                         { hosts: [...], basicRules: [...], rules: [...] }
 *   {prefix}clusters/{name}                         { retries: 1, subclusters: { dc1: { weight: 70 } } }
 *   {prefix}backends/{cluster}/{subcluster}/{addr}  { weight: 2 }   (or empty: weight 1)
 *
 * Object values are JSON or YAML; `defaultProduct` and conditions are plain text (or a JSON
 * string). `keysToRead` turns a key → value map into routing-table input with every part
 * labelled by its key; `tableToKeys` is the reverse (`switchboard etcd import`).
 */
import { parse as parseYaml, stringify } from 'yaml';
import type { RoutingTable } from '../bfe/routing-table.ts';
import { Labels } from '../sqlite/relabel.ts';
import type { StoreRead } from '../sqlite/view.ts';

type Json = Record<string, unknown>;

/** Normalises a prefix so it ends with exactly one `/`. */
export function normalisePrefix(prefix: string): string {
  return prefix.endsWith('/') ? prefix : `${prefix}/`;
}

function parseObject(text: string, key: string, problems: string[]): Json | undefined {
  if (text.trim() === '') return {};
  let v: unknown;
  try {
    // JSON first: the yaml parser is far slower on the 10,000-key tables etcd may hold.
    v = JSON.parse(text);
  } catch {
    try {
      v = parseYaml(text);
    } catch (e) {
      problems.push(`key ${key}: ${(e as Error).message.split('\n')[0]}`);
      return undefined;
    }
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Json;
  problems.push(`key ${key}: expected an object (JSON or YAML)`);
  return undefined;
}

function parseText(text: string): string {
  const t = text.trim();
  if (!t.startsWith('"')) return t;
  try {
    return String(JSON.parse(t));
  } catch {
    return t;
  }
}

interface Parts {
  readonly input: { defaultProduct?: string; conditions?: Json; products: Json; clusters: Json };
  readonly backends: [string, string][];
}

function sortParts(kvs: ReadonlyMap<string, string>, prefix: string, labels: Labels, problems: string[]): Parts {
  const parts: Parts = { input: { products: {}, clusters: {} }, backends: [] };
  for (const [key, value] of kvs) {
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf('/');
    const kind = slash < 0 ? rest : rest.slice(0, slash);
    const name = slash < 0 ? '' : rest.slice(slash + 1);
    const label = `key ${key}`;
    if (rest === 'defaultProduct') {
      parts.input.defaultProduct = parseText(value);
      labels.set('defaultProduct', label);
    } else if (kind === 'conditions' && name !== '' && !name.includes('/')) {
      parts.input.conditions = { ...parts.input.conditions, [name]: parseText(value) };
      labels.set(`conditions.${name}`, label);
    } else if ((kind === 'products' || kind === 'clusters') && name !== '' && !name.includes('/')) {
      const o = parseObject(value, key, problems);
      if (o === undefined) continue;
      if (kind === 'clusters' && o.subclusters === undefined) o.subclusters = {};
      parts.input[kind][name] = o;
      labels.set(`${kind}.${name}`, label);
    } else if (kind === 'backends') {
      parts.backends.push([key, value]);
    } else {
      problems.push(`${label}: unknown key (expected defaultProduct, conditions/, products/, clusters/ or backends/)`);
    }
  }
  return parts;
}

function addBackend(parts: Parts, prefix: string, key: string, value: string, labels: Labels, problems: string[]) {
  const label = `key ${key}`;
  const segs = key.slice(prefix.length + 'backends/'.length).split('/');
  if (segs.length !== 3 || segs.some((s) => s === '')) {
    problems.push(`${label}: expected backends/{cluster}/{subcluster}/{host:port}`);
    return;
  }
  const [cluster, sub, address] = segs as [string, string, string];
  const c = parts.input.clusters[cluster] as { subclusters: Record<string, Json> } | undefined;
  const s = c?.subclusters[sub];
  if (s === undefined) {
    problems.push(`${label}: sub-cluster ${cluster}/${sub} does not exist`);
    return;
  }
  const o = parseObject(value, key, problems);
  if (o === undefined) return;
  const list = (s.backends ?? []) as unknown[];
  s.backends = list;
  labels.set(`clusters.${cluster}.subclusters.${sub}.backends[${list.length}]`, label);
  list.push({ ...o, address });
}

/** Key → value map (all under `prefix`) → routing-table input labelled by key. */
export function keysToRead(kvs: ReadonlyMap<string, string>, prefix: string): StoreRead {
  const labels = new Labels();
  const problems: string[] = [];
  const parts = sortParts(kvs, prefix, labels, problems);
  // Backends last: they attach to the sub-clusters their cluster key declared.
  for (const [key, value] of parts.backends.sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    addBackend(parts, prefix, key, value, labels, problems);
  }
  return { input: parts.input, labels, problems };
}

/** A routing table → the keys and values that describe it (JSON values unless `yaml`). */
export function tableToKeys(
  table: RoutingTable,
  prefix: string,
  format: 'json' | 'yaml' = 'json',
): Map<string, string> {
  const encode = (v: unknown) => (format === 'json' ? JSON.stringify(v) : stringify(v));
  const out = new Map<string, string>();
  if (table.defaultProduct !== undefined) out.set(`${prefix}defaultProduct`, table.defaultProduct);
  for (const [name, cond] of Object.entries(table.conditions ?? {})) out.set(`${prefix}conditions/${name}`, cond);
  for (const [name, p] of Object.entries(table.products)) out.set(`${prefix}products/${name}`, encode(p));
  for (const [name, c] of Object.entries(table.clusters)) {
    const subclusters: Json = {};
    for (const [subName, s] of Object.entries(c.subclusters)) {
      subclusters[subName] = { weight: s.weight };
      for (const b of s.backends) {
        out.set(
          `${prefix}backends/${name}/${subName}/${b.address}`,
          encode({ weight: b.weight, ...(b.name ? { name: b.name } : {}) }),
        );
      }
    }
    const { subclusters: _s, ...policy } = c;
    out.set(`${prefix}clusters/${name}`, encode({ ...policy, subclusters }));
  }
  return out;
}
