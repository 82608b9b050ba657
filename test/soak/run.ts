/**
 * `npm run soak`: the full soak (issue 13 §4), 10 minutes by default (SOAK_SECONDS), reloads
 * every 30 s, a backend restarted every minute; prints the figures as JSON, exits 1 on failure.
 */
import { runSoak } from './soak.ts';

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const report = await runSoak({
  durationMs: seconds * 1000,
  reloadEveryMs: 30_000,
  restartEveryMs: 60_000,
  warmupMs: Math.min(60_000, (seconds * 1000) / 5),
});
console.log(JSON.stringify(report, null, 2));
const ok =
  report.errors.unexplained.length === 0 &&
  report.fds.after <= report.fds.start &&
  report.rss.after <= report.rss.warm * 1.1;
process.exit(ok ? 0 : 1);
