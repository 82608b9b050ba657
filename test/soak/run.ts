/**
 * `npm run soak`: the full soak (issue 13 §4), SOAK_SECONDS per panel (default 600) through the
 * panels in SOAK_PANELS (default `net,worker`), reloads every 30 s, a backend restarted every
 * minute; prints the figures of each, exits 1 if any failed.
 */
import { formatReport, PANELS, runSoak, verdict } from './soak.ts';

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const panels = (process.env.SOAK_PANELS ?? 'net,worker').split(',').filter((p) => p !== '');
let failed = false;
for (const panel of panels) {
  if (!(panel in PANELS)) {
    console.error(`soak: unknown panel ${panel} (expected ${Object.keys(PANELS).join(', ')})`);
    process.exit(2);
  }
  const report = await runSoak({
    panel: panel as keyof typeof PANELS,
    durationMs: seconds * 1000,
    reloadEveryMs: 30_000,
    restartEveryMs: 60_000,
    warmupMs: Math.min(60_000, (seconds * 1000) / 5),
  });
  console.log(JSON.stringify(report, null, 2));
  console.log(formatReport(report));
  failed ||= verdict(report).length > 0;
}
process.exit(failed ? 1 : 0);
