/**
 * Response-status outlier detection (BFE's `OutlierDetectionHttpCode`): a cluster's
 * `outlierStatus` names the statuses that count as a backend failure for passive health, while
 * the response itself still goes to the client and is never retried.
 *
 * 1. The pattern is a `|` list of exact codes (`502`) or classes (`5xx`, any of 1xx–5xx),
 *    case-insensitive, spaces around elements ignored; '' means none.
 * 2. `compileOutlierStatus` turns it into a 600-entry table once (config load validates it, the
 *    panel compiles it on first use and caches it by pattern), so matching is one array read.
 */
import { SwitchboardError } from '../base/errors.ts';

/** A compiled outlier pattern. */
export interface OutlierStatus {
  readonly pattern: string;
  /** True when a response with `status` counts as a backend failure. */
  matches(status: number): boolean;
}

const ELEMENT = /^(?:([1-5][0-9]{2})|([1-5])xx)$/;

/** Compiles `pattern`; undefined for '' (none). Throws SWB_ERR_CONFIG naming the bad element. */
export function compileOutlierStatus(pattern: string): OutlierStatus | undefined {
  const text = pattern.trim().toLowerCase();
  if (text === '') return undefined;
  const table = new Uint8Array(600);
  for (const raw of text.split('|')) {
    const element = raw.trim();
    const m = ELEMENT.exec(element);
    if (m === null) {
      throw new SwitchboardError(
        'SWB_ERR_CONFIG',
        `outlierStatus "${pattern}": "${element}" is not a status (100-599) or a class like 5xx`,
      );
    }
    if (m[1] !== undefined) table[Number(m[1])] = 1;
    else table.fill(1, Number(m[2]) * 100, Number(m[2]) * 100 + 100);
  }
  return Object.freeze({ pattern, matches: (status: number) => table[status] === 1 });
}

const cache = new Map<string, OutlierStatus | undefined>();

/** The compiled form of a policy's `outlierStatus`, compiled once per distinct pattern. */
export function outlierStatusFor(pattern: string | undefined): OutlierStatus | undefined {
  if (pattern === undefined || pattern === '') return undefined;
  if (cache.has(pattern)) return cache.get(pattern);
  let compiled: OutlierStatus | undefined;
  try {
    compiled = compileOutlierStatus(pattern);
  } catch {
    // Config validation rejects bad patterns; a plugin that skipped it gets no detection.
    compiled = undefined;
  }
  cache.set(pattern, compiled);
  return compiled;
}
