/**
 * The retry budget end to end through the `net` panel (issue 4): with 4 refusing backends in 2
 * sub-clusters, `retries: 2`, `crossRetries: 1`, the router makes exactly 1 + 2 + 1 = 4 connect
 * attempts, each on a different backend, then answers 502. Attempts are counted from the
 * `switchboard:upstream:connect` diagnostics channel (a refused connect never reaches a listener).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend } from '../harness/backend.ts';
import { headerOf, rawRequest, statusOf } from '../harness/client.ts';
import { startTestRouter } from '../harness/router.ts';

const attempts: { id: string; ok: boolean }[] = [];
const onConnect = (m: unknown) => {
  const e = m as { backend: { id: string }; ok: boolean };
  attempts.push({ id: e.backend.id, ok: e.ok });
};
subscribe('switchboard:upstream:connect', onConnect);
afterAll(() => unsubscribe('switchboard:upstream:connect', onConnect));

async function refusing(n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`127.0.0.1:${await closedPort()}`);
  return out;
}

describe('retry budget through the net panel (bfe operator)', () => {
  it('4 refusing backends in 2 sub-clusters, retries 2 + crossRetries 1 → 502 after exactly 4 distinct attempts', async () => {
    const [a, b, c, d] = await refusing(4);
    const router = await startTestRouter({
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: {
            retries: 2,
            crossRetries: 1,
            healthCheck: { failNum: 100 },
            subclusters: {
              dc1: { weight: 1, backends: [{ address: a }, { address: b }] },
              dc2: { weight: 1, backends: [{ address: c }, { address: d }] },
            },
          },
        },
      },
    });
    try {
      attempts.length = 0;
      const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\n\r\n');
      expect(statusOf(res)).toBe(502);
      expect(headerOf(res, 'X-Switchboard-Error')).toBe('connect_failed');
      expect(attempts).toHaveLength(4);
      expect(attempts.every((x) => !x.ok)).toBe(true);
      expect(new Set(attempts.map((x) => x.id)).size).toBe(4);
      // 1 + retries stay in the first sub-cluster (it has only 2 backends, so the third attempt
      // repeats none: it must cross), and crossRetries reach the other one.
      const dcOf = (id: string) => ([a, b].includes(id) ? 'dc1' : 'dc2');
      expect(new Set(attempts.map((x) => dcOf(x.id))).size).toBe(2);
      await router.waitForAccess(1);
      expect(router.access.at(-1)).toMatchObject({ result: 'connect_failed', attempts: 4 });
    } finally {
      await router.close();
    }
  });

  it('the first backend refuses, the second answers', async () => {
    const [dead] = await refusing(1);
    const live = await startHttpBackend('live');
    const router = await startTestRouter({
      addressBook: {
        name: 'bfe',
        products: { p: { hosts: ['*'], rules: [{ cond: 'default_t()', cluster: 'c' }] } },
        clusters: {
          c: { subclusters: { s1: { weight: 1, backends: [{ address: dead }, { address: live.address }] } } },
        },
      },
    });
    try {
      for (let i = 0; i < 4; i++) {
        const res = await rawRequest(router.port(), 'GET / HTTP/1.1\r\nHost: x.test\r\nConnection: close\r\n\r\n');
        expect(statusOf(res)).toBe(200);
      }
      expect(live.hits).toBe(4);
    } finally {
      await router.close();
      await live.close();
    }
  });
});
