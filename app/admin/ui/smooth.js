// Smoothing of the traffic chart: each point is the mean rate over the `windowMs` before it,
// weighted by the time each sample covers (the router samples about once a second, and a timer
// that fires late makes one interval longer and the next shorter: the raw rates of a steady load
// then alternate, say 9 and 11 requests/s, and the line saws). Pure: no DOM, tested on a series.

/** The window the chart states in its title ("10 s average"). */
export const SMOOTH_MS = 10_000;

/**
 * `points` ([[t, rate]], oldest first, t in ms at the end of each sample's interval) averaged over
 * `windowMs`: the result has one point per input, each the time-weighted mean of the samples
 * ending within `windowMs` of it. The first sample's interval is taken as the next one's.
 */
export function smooth(points, windowMs = SMOOTH_MS) {
  const out = [];
  let start = 0;
  let weighted = 0;
  let span = 0;
  const dt = (i) => {
    if (i > 0) return points[i][0] - points[i - 1][0];
    return points.length > 1 ? points[1][0] - points[0][0] : 1000;
  };
  for (let i = 0; i < points.length; i++) {
    const d = dt(i);
    weighted += points[i][1] * d;
    span += d;
    while (start < i && points[i][0] - points[start][0] >= windowMs) {
      const ds = dt(start);
      weighted -= points[start][1] * ds;
      span -= ds;
      start++;
    }
    out.push([points[i][0], span > 0 ? Math.round((weighted / span) * 100) / 100 : points[i][1]]);
  }
  return out;
}
