/**
 * A long typed array sorted without holding the event loop (the list loads of cidr-set.ts):
 *
 * 1. Runs of `RUN` keys are sorted on their own: natively (numeric order) without `cmp`, else
 *    by `cmp`; a pause after each run.
 * 2. Runs are merged pairwise into a second array of the same kind, doubling their width each
 *    pass, with a pause after each `RUN` keys written.
 *
 * The result is one of the two arrays (the input, sorted, or the other).
 */
import type { TimeSlices } from './time-slices.ts';

/** Keys per run sorted at once, and per slice of a merge. */
export const RUN = 16_384;

type Keys = Float64Array | Uint32Array;

/** Sorts `a` (ascending, or by `cmp`) a run at a time, then merging runs pairwise, pausing between slices. */
export async function sortInSlices<A extends Keys>(
  a: A,
  slices: TimeSlices,
  cmp?: (x: number, y: number) => number,
): Promise<A> {
  const n = a.length;
  for (let i = 0; i < n; i += RUN) {
    const run = a.subarray(i, Math.min(n, i + RUN));
    if (cmp === undefined) run.sort();
    else run.sort(cmp);
    await slices.pause();
  }
  const inOrder = cmp === undefined ? (x: number, y: number) => x <= y : (x: number, y: number) => cmp(x, y) <= 0;
  let src: A = a;
  let dst = new (a.constructor as new (length: number) => A)(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (k < hi) {
        const stop = Math.min(hi, k + RUN);
        for (; k < stop; k++) {
          if (j >= hi || (i < mid && inOrder(src[i] as number, src[j] as number))) dst[k] = src[i++] as number;
          else dst[k] = src[j++] as number;
        }
        await slices.pause();
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}
