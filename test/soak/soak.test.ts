/**
 * The CI soak (issue 13 §4): 60 s of mixed traffic through the net panel with reloads every 10 s
 * and a backend restarted every 20 s. `npm run soak` runs the full 10-minute version (run.ts).
 */
import { describe, expect, it } from 'vitest';
import { runSoak } from './soak.ts';

const SECONDS = Number(process.env.SOAK_CI_SECONDS ?? 60);

describe('soak (short CI version)', () => {
  it(
    'no unexplained errors; RSS within 10% of warm-up; descriptors back to baseline',
    async () => {
      const r = await runSoak({
        durationMs: SECONDS * 1000,
        reloadEveryMs: 10_000,
        restartEveryMs: 20_000,
        // Half the run: V8 grows its heap for a while under new load; RSS is compared after that.
        warmupMs: (SECONDS * 1000) / 2,
      });
      console.log(JSON.stringify(r, null, 2));
      expect(r.errors.unexplained).toEqual([]);
      expect(Object.values(r.requests).reduce((a, b) => a + b, 0)).toBeGreaterThan(100);
      for (const kind of ['keep-alive', 'churn', 'upload', 'websocket', 'h2c'])
        expect(r.requests[kind]).toBeGreaterThan(0);
      expect(r.reloads).toBeGreaterThan(0);
      expect(r.restarts).toBeGreaterThan(0);
      expect(r.fds.after).toBeLessThanOrEqual(r.fds.start);
      expect(r.rss.after).toBeLessThanOrEqual(r.rss.warm * 1.1);
    },
    (SECONDS + 90) * 1000,
  );
});
