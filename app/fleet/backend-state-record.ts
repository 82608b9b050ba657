/**
 * One override of a backend's admin state, as a layer (local or fleet) holds it and as etcd
 * stores it under `<prefix>backends/<backend id>` (JSON):
 *
 *   { "state": "drain" | "disable" | "enable", "weight"?: N, "setBy": "<router id>", "setAt": "<ISO 8601>" }
 *
 * `state: enable` sets no mode (the layer leaves the mode to the one below it); `weight` absent
 * sets no weight. A record that sets neither is no record: `change()` answers undefined and the
 * layer drops it (the fleet deletes the key), so `enable` and `weight null` leave nothing behind.
 */
import type { AdminMode } from '../../src/contracts/backend-registry.ts';

/** What an override says of the mode: `enable` = nothing (the mode below applies). */
export type OverrideState = 'drain' | 'disable' | 'enable';

/** Largest weight an override may set (shared memory stores weight + 1 in an Int32). */
export const MAX_WEIGHT = 1_000_000;

/** One layer's override of one backend. */
export interface OverrideRecord {
  readonly state: OverrideState;
  /** The weight it sets; undefined = none. */
  readonly weight: number | undefined;
  /** The router id that made the call (`fleet.id`, or the hostname without `fleet:`). */
  readonly setBy: string;
  /** ISO 8601: when the call was made (the setting router's clock). */
  readonly setAt: string;
}

/** What one admin call changes: the mode, or the weight (undefined clears it). */
export type OverrideChange =
  | { readonly kind: 'mode'; readonly mode: AdminMode }
  | { readonly kind: 'weight'; readonly weight: number | undefined };

const STATE_OF: Readonly<Record<AdminMode, OverrideState>> = { up: 'enable', draining: 'drain', disabled: 'disable' };
const MODE_OF: Readonly<Record<OverrideState, AdminMode>> = { enable: 'up', drain: 'draining', disable: 'disabled' };

/** The mode a record sets, or undefined when it sets none (`enable`). */
export function modeOf(r: OverrideRecord | undefined): AdminMode | undefined {
  return r === undefined || r.state === 'enable' ? undefined : MODE_OF[r.state];
}

/** `before` with `c` applied by `setBy` at `at`; undefined when nothing is left to say. */
export function change(
  before: OverrideRecord | undefined,
  c: OverrideChange,
  setBy: string,
  at: Date,
): OverrideRecord | undefined {
  const state = c.kind === 'mode' ? STATE_OF[c.mode] : (before?.state ?? 'enable');
  const weight = c.kind === 'weight' ? c.weight : before?.weight;
  if (state === 'enable' && weight === undefined) return undefined;
  return { state, weight, setBy, setAt: at.toISOString() };
}

/** The JSON etcd stores. */
export function serialize(r: OverrideRecord): string {
  return JSON.stringify({
    state: r.state,
    ...(r.weight !== undefined ? { weight: r.weight } : {}),
    setBy: r.setBy,
    setAt: r.setAt,
  });
}

/** A stored value read back; undefined when it is not a record (the caller logs and skips it). */
export function parse(value: string): OverrideRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.state !== 'drain' && o.state !== 'disable' && o.state !== 'enable') return undefined;
  const w = o.weight;
  const weightOk = w === undefined || (typeof w === 'number' && Number.isInteger(w) && w >= 0 && w <= MAX_WEIGHT);
  if (!weightOk || typeof o.setBy !== 'string' || typeof o.setAt !== 'string') return undefined;
  return { state: o.state, weight: w as number | undefined, setBy: o.setBy, setAt: o.setAt };
}
