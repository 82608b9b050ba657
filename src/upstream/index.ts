/** The upstream pipeline (README.md in this folder). */
export { type Opened, type OpenOn, tryJacks, type UpstreamFailure } from './attempts.ts';
export { type DialPlan, dial, type UpstreamHost } from './dial.ts';
export { openUpstream, type Upstream } from './open.ts';
export { poolKey } from './pool-key.ts';
export { tlsOptions } from './tls-options.ts';
