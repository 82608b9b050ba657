/**
 * Address-book configs that several test files route with (STYLE §18: what two files need lives
 * in the harness).
 */

/** One cluster of one backend at `address`, with the upstream `protocol` when given. */
export function oneBackendCluster(address: string, protocol?: string): Record<string, unknown> {
  return {
    ...(protocol === undefined ? {} : { protocol }),
    subclusters: { s1: { weight: 1, backends: [{ address }] } },
  };
}

/**
 * A bfe book that tells paths apart, for per-request and per-stream routing checks: `/admin` to
 * `GSLB_BLACKHOLE` (503, no backend), `/api` to `api`, the rest to `app`, on any host.
 */
export function pathSplitBook(app: string, api: string, protocol?: string): Record<string, unknown> {
  return {
    name: 'bfe',
    products: {
      p: {
        hosts: ['*'],
        rules: [
          { cond: 'req_path_prefix_in("/admin", false)', cluster: 'admin' },
          { cond: 'req_path_prefix_in("/api", false)', cluster: 'api' },
          { cond: 'default_t()', cluster: 'app' },
        ],
      },
    },
    clusters: {
      app: oneBackendCluster(app, protocol),
      api: oneBackendCluster(api, protocol),
      admin: { subclusters: { GSLB_BLACKHOLE: { weight: 1 } } },
    },
  };
}
