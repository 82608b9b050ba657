/**
 * The clock of the shared counters: one timeline for every thread of the process.
 *
 * `performance.now()` counts from each thread's own start, so two worker threads disagree by
 * the time between their starts; `Date.now()` is shared but steps with the wall clock (NTP),
 * which would hand out or withhold a burst. `process.hrtime()` reads the process's monotonic
 * clock (libuv's uv_hrtime, CLOCK_MONOTONIC), the same in every thread. So each thread
 * measures once how far its `performance.now()` is from that clock and then reads
 * `performance.now()` plus the offset: shared, monotonic, allocation-free per call.
 */
import { hrtime } from 'node:process';

/** Milliseconds on the process's monotonic clock, the same timeline in every thread. */
export function processClock(): () => number {
  const [seconds, nanoseconds] = hrtime();
  const offset = seconds * 1e3 + nanoseconds / 1e6 - performance.now();
  return () => performance.now() + offset;
}
