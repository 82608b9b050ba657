/**
 * Runs callbacks once the I/O of the current event-loop turn was handled: one `setImmediate`
 * for every callback queued in that turn (not one each), in the order they were queued.
 *
 * stream-forward.ts holds an upstream response head here so that what the same reads brought after it
 * (the whole body, the end of the stream, trailer fields) is known before the head is passed on:
 * a response that is already complete without trailers is then sent without `waitForTrailers`
 * (no 'wantTrailers' round, no `sendTrailers`, no `setImmediate` of node's per stream).
 * What is queued is an object with an `afterReads` method (the stream's own forwarding object),
 * not a closure made for the purpose.
 */

/** Something to run after this turn's reads. */
export interface AfterReads {
  /** Must not throw (the callbacks queued after it would not run). */
  afterReads(): void;
}

let queued: AfterReads[] = [];
let spare: AfterReads[] = [];

function run(): void {
  const now = queued;
  queued = spare;
  for (let i = 0; i < now.length; i++) now[i]!.afterReads();
  now.length = 0;
  spare = now;
}

/** Calls `job.afterReads()` after this turn's I/O callbacks (the check phase of the same loop iteration). */
export function afterReads(job: AfterReads): void {
  if (queued.push(job) === 1) setImmediate(run);
}
