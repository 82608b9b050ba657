/**
 * Panel conformance scenario for `Upgrade: h2c` under per-request routing (issue 40 item 7),
 * part of the table of panel.ts. On the net panel (and worker threads running it) the listener's
 * default `h2c: route` switches the connection itself: `curl --http2` gets 101 and HTTP/2, its
 * request is stream 1, and a later stream to the blackholed `/admin` is answered 503 and
 * reaches no backend. The http2 panel's HTTP/1.1 fallback does not switch: 400, no backend.
 * Under `routing: per-connection` the listener's default is `allow` (400), so there the
 * scenario's listener sets `h2c: route`, and the net panel switches it as under per-request.
 */
import { execFile } from 'node:child_process';
import { expect } from 'vitest';
import { startHttpBackend } from '../harness/backend.ts';
import { LISTEN, startTestRouter } from '../harness/router.ts';
import { panelKeys, routesPerConnection, runsHttp2, type Scenario } from './panel-under-test.ts';

/** curl's status code and HTTP version for each URL, one connection (bounded). */
function curl(urls: readonly string[]): Promise<string> {
  const args = ['-sS', '--http2', '-w', '%{http_code} %{http_version}\n'];
  for (const u of urls) args.push('-o', '/dev/null', u);
  return new Promise((resolve) => execFile('curl', args, { timeout: 10_000 }, (_e, stdout) => resolve(stdout)));
}

export const h2cUpgradeScenarios: readonly Scenario[] = [
  {
    name: 'Upgrade: h2c under per-request: net switches it (101, HTTP/2, every stream routed); http2 answers 400',
    spec: 'README What routing rules can enforce: h2c: route and Upgrade: h2c; issue 40 item 7',
    async run(p) {
      const app = await startHttpBackend('app');
      const r = await startTestRouter({
        ...panelKeys(p),
        ...(routesPerConnection(p) ? { listeners: [{ ...LISTEN[0], h2c: 'route' }] } : {}),
        addressBook: {
          name: 'bfe',
          products: {
            p: {
              hosts: ['*'],
              rules: [
                { cond: 'req_path_prefix_in("/admin", false)', cluster: 'admin' },
                { cond: 'default_t()', cluster: 'app' },
              ],
            },
          },
          clusters: {
            app: { subclusters: { s1: { weight: 1, backends: [{ address: app.address }] } } },
            admin: { subclusters: { GSLB_BLACKHOLE: { weight: 1 } } },
          },
        },
      });
      try {
        const base = `http://127.0.0.1:${r.port()}`;
        const out = await curl([`${base}/first`, `${base}/admin/secret`]);
        if (runsHttp2(p)) {
          // curl gives up on the connection after the 400 and sends /admin over a new one.
          expect(out.split('\n')[0]).toBe('400 1.1');
          expect(app.hits).toBe(0);
        } else {
          expect(out).toBe('200 2\n503 2\n');
          expect(app.hits).toBe(1);
        }
      } finally {
        await r.close();
        await app.close();
      }
    },
  },
];
