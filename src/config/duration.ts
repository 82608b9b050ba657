/**
 * Durations in config: strings like `500ms`, `2s`, `1m`, `1h`, `30d`, or a number of milliseconds.
 */
import { z } from 'zod';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms` / `2s` / `1.5m` / `250` into milliseconds; undefined when malformed. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (m === null) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 'ms']!);
}

/** What a duration string looks like, for the JSON Schema (app/config-schema.ts). */
export const DURATION_PATTERN = '^\\s*\\d+(\\.\\d+)?(ms|s|m|h)?\\s*$';

/** The string branch of a duration, so the JSON Schema can give it DURATION_PATTERN. */
export const durationText = z.string();

/** The number branch (milliseconds), given `minimum: 0` in the JSON Schema. */
export const durationNumber = z.number();

/** A zod schema for a duration; the parsed value is milliseconds. */
export const duration = z.union([durationText, durationNumber]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected a duration like 500ms, 2s or 1m, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return ms;
});
