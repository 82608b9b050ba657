/**
 * Runs callbacks once the I/O of the current event-loop turn was handled: one `setImmediate`
 * for every callback queued in that turn (not one each), in the order they were queued.
 *
 * stream.ts holds an upstream response head here so that what the same reads brought after it
 * (the whole body, the end of the stream, trailer fields) is known before the head is passed on:
 * a response that is already complete without trailers is then sent without `waitForTrailers`
 * (no 'wantTrailers' round, no `sendTrailers`, no `setImmediate` of node's per stream).
 */

let queued: Array<() => void> = [];
let spare: Array<() => void> = [];

function run(): void {
  const now = queued;
  queued = spare;
  for (let i = 0; i < now.length; i++) now[i]!();
  now.length = 0;
  spare = now;
}

/**
 * Calls `fn` after this turn's I/O callbacks (the check phase of the same loop iteration).
 * `fn` must not throw (the callbacks queued after it would not run).
 */
export function afterReads(fn: () => void): void {
  if (queued.push(fn) === 1) setImmediate(run);
}
