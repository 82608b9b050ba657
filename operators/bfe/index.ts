/** The `bfe` operator: GSLB + the cluster's `balance` (wrr, wlc, sticky). */
export { bfe } from './bfe.ts';
export { stickyOrder, stickyPick } from './sticky.ts';
