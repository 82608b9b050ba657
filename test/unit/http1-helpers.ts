/** Shared helpers for the HTTP/1 peek tests: run a peek whole or split, capture the verdict. */

import { isSwitchboardError } from '../../src/base/errors.ts';
import { type Http1Head, Http1HeadScanner } from '../../src/peek/http1.ts';

/** What a peek ended with: a head, "need more", or a typed error (code + message). */
export type Verdict =
  | { readonly head: Http1Head }
  | { readonly more: true }
  | { readonly code: string; readonly message: string };

/** Runs `fn`, turning a SwitchboardError into a verdict; anything else is rethrown. */
export function verdictOf(fn: () => Http1Head | undefined): Verdict {
  try {
    const head = fn();
    return head === undefined ? { more: true } : { head };
  } catch (e) {
    if (isSwitchboardError(e)) return { code: e.code, message: e.message };
    throw e;
  }
}

/** Feeds `bytes` in steps of `step` bytes into one scanner, as a socket would deliver them. */
export function feedSplit(bytes: Buffer, step: number, max: number): Verdict {
  const scanner = new Http1HeadScanner(max);
  for (let n = Math.min(step, bytes.length); ; n = Math.min(n + step, bytes.length)) {
    const v = verdictOf(() => scanner.feed(bytes.subarray(0, n)));
    if (!('more' in v) || n === bytes.length) return v;
  }
}

/** Feeds each split size in turn to a fresh scanner, returning every verdict. */
export function allSplits(bytes: Buffer, max: number, steps: readonly number[] = [1, 7]): Verdict[] {
  return steps.map((s) => feedSplit(bytes, s, max));
}

/** Latin1 bytes of a string (so "\xff" is one byte). */
export function raw(s: string): Buffer {
  return Buffer.from(s, 'latin1');
}
