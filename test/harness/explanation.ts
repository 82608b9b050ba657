/** What every `switchboard route --json` answer holds (test/integration/route-explain*.test.ts). */

/** The keys of `route --json`, sorted: the same for every book and every answer. */
export const EXPLANATION_KEYS = [
  'allHealthy',
  'backendState',
  'chosen',
  'cluster',
  'policies',
  'product',
  'reason',
  'request',
  'routed',
  'rule',
  'steps',
] as const;
