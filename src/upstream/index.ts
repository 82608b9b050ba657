/** The upstream pipeline (README.md in this folder). */
export {
  FIRST_ATTEMPT,
  isUpstreamFailure,
  type Opened,
  type OpenOn,
  type OpenThen,
  pickFirst,
  tryJacks,
  tryJacksThen,
  type UpstreamFailure,
} from './attempts.ts';
export { type DialPlan, dial, dialThen, type UpstreamHost } from './dial.ts';
export { openUpstreamThen, type Upstream } from './open.ts';
export { judgesByResponse, ResponseJudge, responseJudgeFor } from './outlier-judge.ts';
export { poolKey } from './pool-key.ts';
export { proxyHeaderFor } from './proxy-out.ts';
export { tlsOptions } from './tls-options.ts';
