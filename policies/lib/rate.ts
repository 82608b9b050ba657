/**
 * A rate as written in config: `100/s`, `6000/m`, `10/h`, or per a duration (`5/10s`, `1/500ms`).
 */
import { z } from 'zod';
import { parseDuration } from '../../src/config/duration.ts';

const UNIT: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };

/** A parsed rate: `count` events per `per` milliseconds. */
export interface Rate {
  readonly count: number;
  readonly per: number;
}

/** Parses `N/unit` or `N/duration`; undefined when malformed. */
export function parseRate(text: string): Rate | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\S+)\s*$/.exec(text);
  if (m === null) return undefined;
  const count = Number(m[1]);
  const unit = m[2] as string;
  const per = UNIT[unit] ?? parseDuration(unit);
  if (!(count > 0) || per === undefined || per <= 0) return undefined;
  return { count, per };
}

/** The zod schema of a rate option. */
export const rateSchema = z.string().transform((v, ctx) => {
  const rate = parseRate(v);
  if (rate === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected a rate like 100/s, 6000/m or 5/10s, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return rate;
});
