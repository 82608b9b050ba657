/**
 * A rule's identity: its name and a hash of its definition in canonical form (keys sorted), so
 * a reload that leaves a rule unchanged (whatever the key order or spacing in the file) finds
 * its counters again, and any change to it starts them afresh.
 */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level; `undefined` members are left out. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `name#<sha-256 of the canonical definition, 16 hex digits>`. */
export function ruleIdentity(name: string, definition: unknown): string {
  const hash = createHash('sha256').update(canonicalJson(definition)).digest('hex').slice(0, 16);
  return `${name}#${hash}`;
}
