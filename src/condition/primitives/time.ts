/**
 * Time primitives (reference bfe.md §1.6 "Time"). Instants are `yyyymmddhhmmss` plus a military
 * zone letter (Z = UTC, A..M without J = +1..+12, N..Y = -1..-12; H is UTC+8); daily windows are
 * `hhmmss` plus a letter. Both ends are inclusive at one-second resolution. BFE's
 * `X-Bfe-Debug-Time` override is deliberately not supported: any client could send it.
 */
import { str } from './matchers.ts';
import { type BuildContext, type Condition, type PrimitiveTable, params } from './types.ts';

const EAST = 'ABCDEFGHIKLM';
const WEST = 'NOPQRSTUVWXY';

/** Offset from UTC in seconds of a military zone letter, or undefined. */
function zoneOffset(letter: string): number | undefined {
  if (letter === 'Z') return 0;
  const east = EAST.indexOf(letter);
  if (east >= 0) return (east + 1) * 3600;
  const west = WEST.indexOf(letter);
  return west >= 0 ? -(west + 1) * 3600 : undefined;
}

/** Parses `yyyymmddhhmmssZ` into seconds since the epoch, or fails at argument `index`. */
function instant(text: string, ctx: BuildContext, index: number): number {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})([A-Z])$/.exec(text);
  const offset = m ? zoneOffset(m[7] as string) : undefined;
  if (!m || offset === undefined) {
    return ctx.fail(index, `bad time "${text}": expected yyyymmddhhmmss and a zone letter, e.g. 20190204200000H`);
  }
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (
    back.getUTCFullYear() !== y ||
    back.getUTCMonth() !== mo - 1 ||
    back.getUTCDate() !== d ||
    h > 23 ||
    mi > 59 ||
    s > 59
  ) {
    ctx.fail(index, `bad time "${text}": no such date or time`);
  }
  return ms / 1000 - offset;
}

/** Parses `hhmmssZ` into [seconds of the day, zone offset], or fails at argument `index`. */
function timeOfDay(text: string, ctx: BuildContext, index: number): [number, number] {
  const m = /^(\d{2})(\d{2})(\d{2})([A-Z])$/.exec(text);
  const offset = m ? zoneOffset(m[4] as string) : undefined;
  if (!m || offset === undefined) {
    return ctx.fail(index, `bad time of day "${text}": expected hhmmss and a zone letter, e.g. 200000H`);
  }
  const [h, mi, s] = m.slice(1, 4).map(Number) as [number, number, number];
  if (h > 23 || mi > 59 || s > 59) ctx.fail(index, `bad time of day "${text}": no such time`);
  return [h * 3600 + mi * 60 + s, offset];
}

/** Time primitives. */
export const timePrimitives: PrimitiveTable = {
  bfe_time_range: {
    params: params('S:start', 'S:end'),
    build: (a, ctx): Condition => {
      const from = instant(str(a, 0), ctx, 0);
      const to = instant(str(a, 1), ctx, 1);
      if (from > to) ctx.fail(1, `time range start ${str(a, 0)} is after end ${str(a, 1)}`);
      const now = ctx.now;
      return () => {
        const t = Math.floor(now() / 1000);
        return from <= t && t <= to;
      };
    },
  },
  bfe_periodic_time_range: {
    params: params('S:start', 'S:end', 'S:period'),
    build: (a, ctx): Condition => {
      const [from, zone] = timeOfDay(str(a, 0), ctx, 0);
      const [to, zoneEnd] = timeOfDay(str(a, 1), ctx, 1);
      if (zone !== zoneEnd) ctx.fail(1, 'both ends of a daily window must use the same zone letter');
      if (from > to) ctx.fail(1, `daily window start ${str(a, 0)} is after end ${str(a, 1)}`);
      if (str(a, 2) !== '') ctx.fail(2, `period must be "" (BFE supports no other), got "${str(a, 2)}"`);
      const now = ctx.now;
      return () => {
        const local = Math.floor(now() / 1000) + zone;
        const t = ((local % 86400) + 86400) % 86400;
        return from <= t && t <= to;
      };
    },
  },
};
