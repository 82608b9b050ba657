/** The upstream pipeline (README.md in this folder). */
export { type Opened, type OpenOn, type OpenThen, tryJacks, tryJacksThen, type UpstreamFailure } from './attempts.ts';
export { type DialPlan, dial, dialThen, type UpstreamHost } from './dial.ts';
export { openUpstreamThen, type Upstream } from './open.ts';
export { poolKey } from './pool-key.ts';
export { tlsOptions } from './tls-options.ts';
