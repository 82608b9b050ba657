/**
 * The dashboard's page logic that needs no browser (app/admin/ui/, plain ES modules): the traffic
 * chart's smoothing (a steady load draws a steady line), named conditions shown expanded, and
 * the availability warnings (a cluster or sub-cluster with no backend left).
 */
import { describe, expect, it } from 'vitest';

type Point = [number, number];
interface Warning {
  cluster: string;
  subcluster?: string;
  text: string;
}
/** The page's modules are plain JS for the browser (no types): imported by URL, typed here. */
const ui = (name: string) => import(new URL(`../../app/admin/ui/${name}`, import.meta.url).href);
const { smooth, SMOOTH_MS } = (await ui('smooth.js')) as {
  smooth: (points: Point[], windowMs?: number) => Point[];
  SMOOTH_MS: number;
};
const { expand } = (await ui('conditions.js')) as { expand: (cond: string, named: Record<string, string>) => string };
const { countOf, warnings } = (await ui('availability.js')) as {
  countOf: (rows: unknown[]) => { available: number; total: number };
  warnings: (grouped: Map<string, Map<string, unknown[]>>, routes: unknown) => Warning[];
};

/**
 * A steady 10 requests/s from a client that sends them in one burst each second (at .5 s), read
 * by a sampling timer that fires 300 ms late, then 300 ms early (1.3 s and 0.7 s intervals): each
 * interval holds one burst, so the raw rates saw between 7.69 and 14.29 although the load never
 * changes. Rates rounded to two decimals, as traffic.ts stores them.
 */
function burstySteadyLoad(n: number): [number, number][] {
  const out: [number, number][] = [];
  let t = 0;
  let counted = 0;
  for (let i = 0; i < n; i++) {
    const d = i % 2 === 0 ? 1300 : 700;
    t += d;
    const total = 10 * Math.floor((t + 500) / 1000);
    out.push([t, Math.round(((total - counted) / (d / 1000)) * 100) / 100]);
    counted = total;
  }
  return out;
}

describe('traffic chart smoothing', () => {
  it(`draws a steady load as a steady line once the ${SMOOTH_MS / 1000} s window is full`, () => {
    const raw = burstySteadyLoad(60);
    // The raw series saws: the sampling alone is what the smoothing must remove.
    expect(new Set(raw.map((p) => p[1]))).toEqual(new Set([7.69, 14.29]));
    const smoothed = smooth(raw);
    expect(smoothed).toHaveLength(raw.length);
    expect(smoothed.map((p) => p[0])).toEqual(raw.map((p) => p[0]));
    const full = smoothed.filter((p) => p[0] >= raw[0]![0] + SMOOTH_MS);
    expect(full.length).toBeGreaterThan(40);
    for (const [, v] of full) expect(Math.abs(v - 10)).toBeLessThanOrEqual(0.2);
  });

  it('follows a step within one window and keeps a single point as it is', () => {
    const step: [number, number][] = Array.from({ length: 30 }, (_, i) => [(i + 1) * 1000, i < 10 ? 0 : 50]);
    const s = smooth(step);
    expect(s[9]![1]).toBe(0);
    expect(s[12]![1]).toBeGreaterThan(0);
    expect(s[12]![1]).toBeLessThan(50);
    expect(s[25]![1]).toBe(50);
    expect(smooth([[5, 7]])).toEqual([[5, 7]]);
    expect(smooth([])).toEqual([]);
  });
});

describe('named conditions expanded', () => {
  const named = {
    canary: 'req_header_value_in("X-Canary", "1", false)',
    beta: '$canary || req_cookie_key_in("beta")',
    loop: '$loop && default_t()',
  };
  it.each([
    ['$canary', '(req_header_value_in("X-Canary", "1", false))'],
    [
      '$beta && req_path_prefix_in("/api", false)',
      '((req_header_value_in("X-Canary", "1", false)) || req_cookie_key_in("beta")) && req_path_prefix_in("/api", false)',
    ],
    // A `$` inside a string literal is text, an unknown name stays as written, a cycle stops.
    ['req_path_in("/$canary", false)', 'req_path_in("/$canary", false)'],
    ['$unknown', '$unknown'],
    ['$loop', '($loop && default_t())'],
  ])('%s', (cond, shown) => {
    expect(expand(cond, named)).toBe(shown);
  });
});

describe('availability warnings', () => {
  const up = (id: string) => ({
    b: { id, available: true, weight: 1 },
    c: { cluster: 'x', available: true, weight: 1 },
  });
  const off = (id: string) => ({
    b: { id, available: false, weight: 1 },
    c: { cluster: 'x', available: false, weight: 1 },
  });
  const zero = (id: string) => ({
    b: { id, available: true, weight: 0 },
    c: { cluster: 'x', available: true, weight: 0 },
  });
  const routes = {
    products: {
      web: {
        rules: [
          { cond: 'default_t()', cluster: 'web' },
          { cond: 'x', cluster: 'static' },
        ],
      },
    },
  };

  it('counts available of total (weight 0 is out of rotation) and warns per cluster and sub-cluster', () => {
    expect(countOf([up('a'), off('b'), zero('c')])).toEqual({ available: 1, total: 3 });
    const grouped = new Map([
      [
        'web',
        new Map([
          ['dc1', [up('a')]],
          ['dc2', [off('b'), zero('c')]],
        ]),
      ],
      ['static', new Map([['', [off('d')]]])],
      ['api', new Map([['', [up('e')]]])],
    ]);
    const w = warnings(grouped, routes);
    expect(w.map((x) => [x.cluster, x.subcluster])).toEqual([
      ['web', 'dc2'],
      ['static', undefined],
    ]);
    expect(w[1]!.text).toBe(
      'cluster static: no backend available (0 of 1): every request routed to it (products.web.rules[1]) is answered 503',
    );
  });
});
