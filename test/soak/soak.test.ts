/**
 * The CI soak (issue 13 §4): mixed traffic (keep-alive, churn, uploads, WebSockets, h2c, TLS
 * passthrough and termination) through the `net` panel, then through `--panel worker --workers 2`,
 * SOAK_CI_SECONDS each (default 35: both panels fit in ~90 s with start and settling), with
 * reloads every 8 s and a backend restarted every 12 s. `npm run soak` runs the full version.
 */
import { describe, expect, it } from 'vitest';
import { formatReport, KINDS, type PANELS, runSoak } from './soak.ts';

const SECONDS = Number(process.env.SOAK_CI_SECONDS ?? 35);

describe('soak (short CI version)', () => {
  for (const panel of ['net', 'worker'] as (keyof typeof PANELS)[]) {
    it(
      `${panel} panel: no unexplained errors; RSS within 10% of warm-up; descriptors back to baseline`,
      async () => {
        const r = await runSoak({
          panel,
          durationMs: SECONDS * 1000,
          reloadEveryMs: 8_000,
          restartEveryMs: 12_000,
          // V8 grows its heaps for a while under new load; RSS is compared with its level after that.
          warmupMs: (SECONDS * 1000) / 2,
        });
        console.log(formatReport(r));
        expect(r.errors.unexplained).toEqual([]);
        expect(Object.values(r.requests).reduce((a, b) => a + b, 0)).toBeGreaterThan(100);
        for (const kind of KINDS) expect(r.requests[kind], kind).toBeGreaterThan(0);
        expect(r.reloads).toBeGreaterThan(0);
        expect(r.restarts).toBeGreaterThan(0);
        expect(r.fds.after).toBeLessThanOrEqual(r.fds.start);
        expect(r.rss.after).toBeLessThanOrEqual(r.rss.warm * 1.1);
      },
      (SECONDS + 90) * 1000,
    );
  }
});
