/**
 * The dashboard's traffic history: a ring buffer of per-second rates, kept in memory on the
 * router while the admin listener runs.
 *
 * 1. Once a second (an unref'd timer) `sample()` reads the cumulative counters the Prometheus
 *    registry already keeps (app/metrics/metrics.ts: connections ended by listener and result, HTTP/1
 *    requests by product and cluster (`product/cluster`; `(no route)` for the router's own 404s), bytes by listener, open connections by listener) and the
 *    backend registry's per-backend connection totals, and stores the difference to the previous
 *    reading as one `Sample` of rates. Nothing is added to the hot path: the counters exist
 *    whether or not anyone watches, and the sample is the only work when nobody does.
 * 2. Memory is bounded: `capacity` samples (default 300, five minutes), at most `MAX_SERIES`
 *    keys per group in each (the rest are summed under `other`).
 * 3. `since(t)` returns the samples newer than `t` (the page asks for what it lacks);
 *    `backendRate(id)` the latest connections-per-second of one backend, `backendRequestRate(id)`
 *    its requests per second (app/metrics/backend-traffic.ts), `listenerTotals()` the
 *    connections each listener has ended since start.
 */
import type { Metrics } from '../metrics/metrics.ts';
import type { Runtime } from '../runtime/runtime.ts';

/** Keys kept per group and sample; more are summed under `other`. */
export const MAX_SERIES = 40;

/** One second of traffic: rates per second, plus open connections (a level, not a rate). */
export interface Sample {
  /** End of the interval, ms since epoch. */
  readonly t: number;
  /** Per listener: connections open now, connections ended/s, bytes in/s and out/s. */
  readonly listeners: Record<string, { open: number; cps: number; inBps: number; outBps: number }>;
  /** HTTP/1 requests/s by `product/cluster` (per-request routing). */
  readonly clusters: Record<string, number>;
  /** Connections ended/s by result code (`ok`, `no_route`, `upstream_failed`, …). */
  readonly results: Record<string, number>;
}

/** The cumulative counters of one reading, keyed by label set. */
interface Reading {
  readonly t: number;
  readonly conns: Map<string, number>;
  readonly requests: Map<string, number>;
  readonly bytes: Map<string, number>;
  readonly open: Map<string, number>;
  readonly backends: Map<string, number>;
  /** Requests (or forwarded connections) served per backend (app/metrics/backend-traffic.ts). */
  readonly backendRequests: Map<string, number>;
}

type Values = { labels: Record<string, string | number>; value: number }[];

async function valuesOf(metrics: Metrics, name: string): Promise<Values> {
  const metric = metrics.registry.getSingleMetric(name);
  if (metric === undefined) return [];
  return ((await metric.get()) as { values: Values }).values;
}

function sum(values: Values, key: (labels: Record<string, string | number>) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const v of values) {
    const k = key(v.labels);
    out.set(k, (out.get(k) ?? 0) + v.value);
  }
  return out;
}

/** Differences per second between two readings of one group, at most MAX_SERIES keys. */
function rates(now: Map<string, number>, before: Map<string, number>, seconds: number): Record<string, number> {
  const out: Record<string, number> = {};
  let kept = 0;
  for (const [k, v] of now) {
    // A counter that went down was reset (registry cleared): count from zero.
    const prev = before.get(k) ?? 0;
    const d = v >= prev ? v - prev : v;
    const key = kept < MAX_SERIES ? k : 'other';
    if (key === k) kept++;
    out[key] = (out[key] ?? 0) + Math.round((d / seconds) * 100) / 100;
  }
  return out;
}

/** Per-second increase of each id between two readings (a new id starts at its current total). */
function perSecond(now: Map<string, number>, before: Map<string, number>, seconds: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id, total] of now) {
    const prev = before.get(id) ?? total;
    out.set(id, Math.round((Math.max(0, total - prev) / seconds) * 100) / 100);
  }
  return out;
}

/** Samples the router's counters every `intervalMs` into a ring buffer of `capacity` samples. */
export class TrafficHistory {
  readonly #metrics: Metrics;
  readonly #runtime: Runtime;
  readonly #capacity: number;
  readonly #ring: Sample[] = [];
  #next = 0;
  #last: Reading | undefined;
  #backendRates = new Map<string, number>();
  #requestRates = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(metrics: Metrics, runtime: Runtime, options: { capacity?: number } = {}) {
    this.#metrics = metrics;
    this.#runtime = runtime;
    this.#capacity = options.capacity ?? 300;
  }

  /** Starts sampling (first reading now, first sample one interval later). */
  start(intervalMs = 1000): void {
    if (this.#timer !== undefined) return;
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), intervalMs);
    this.#timer.unref();
  }

  /** Stops sampling. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #read(): Promise<Reading> {
    const [conns, requests, bytes, open] = await Promise.all([
      valuesOf(this.#metrics, 'switchboard_connections_total'),
      valuesOf(this.#metrics, 'switchboard_requests_total'),
      valuesOf(this.#metrics, 'switchboard_bytes_total'),
      valuesOf(this.#metrics, 'switchboard_connections_open'),
    ]);
    const backends = new Map<string, number>();
    const backendRequests = new Map<string, number>();
    const served = this.#metrics.backendTraffic;
    for (const s of this.#runtime.registry.all()) {
      backends.set(s.id, s.total);
      backendRequests.set(s.id, served.of(s.id).requests);
    }
    return {
      t: Date.now(),
      conns: sum(conns, (l) => `${l.listener}\u0000${l.result}`),
      requests: sum(requests, (l) =>
        l.product || l.cluster ? `${l.product || '-'}/${l.cluster || '-'}` : '(no route)',
      ),
      bytes: sum(bytes, (l) => `${l.listener}\u0000${l.direction}`),
      open: sum(open, (l) => String(l.listener)),
      backends,
      backendRequests,
    };
  }

  /** Takes one reading and stores the rates since the previous one (tests call it directly). */
  async sample(): Promise<Sample | undefined> {
    if (this.#busy) return undefined;
    this.#busy = true;
    try {
      const now = await this.#read();
      const before = this.#last;
      this.#last = now;
      if (before === undefined) return undefined;
      const seconds = Math.max(0.001, (now.t - before.t) / 1000);
      const byListener = rates(now.conns, before.conns, seconds);
      const bytes = rates(now.bytes, before.bytes, seconds);
      const listeners: Sample['listeners'] = {};
      const results: Record<string, number> = {};
      const entry = (name: string) => {
        listeners[name] ??= { open: now.open.get(name) ?? 0, cps: 0, inBps: 0, outBps: 0 };
        return listeners[name];
      };
      for (const name of now.open.keys()) entry(name);
      for (const [key, r] of Object.entries(byListener)) {
        const [listener, result = 'other'] = key.split('\u0000');
        entry(listener!).cps += r;
        results[result] = (results[result] ?? 0) + r;
      }
      for (const [key, r] of Object.entries(bytes)) {
        const [listener, direction] = key.split('\u0000');
        if (direction === 'in') entry(listener!).inBps += r;
        else entry(listener!).outBps += r;
      }
      const sample: Sample = { t: now.t, listeners, clusters: rates(now.requests, before.requests, seconds), results };
      this.#backendRates = perSecond(now.backends, before.backends, seconds);
      this.#requestRates = perSecond(now.backendRequests, before.backendRequests, seconds);
      if (this.#ring.length < this.#capacity) this.#ring.push(sample);
      else this.#ring[this.#next] = sample;
      this.#next = (this.#next + 1) % this.#capacity;
      return sample;
    } finally {
      this.#busy = false;
    }
  }

  /** The stored samples newer than `t` (ms since epoch), oldest first. */
  since(t = 0): Sample[] {
    const ordered =
      this.#ring.length < this.#capacity
        ? this.#ring
        : [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
    return ordered.filter((s) => s.t > t);
  }

  /** The latest connections-per-second of backend `id` (0 before the second sample). */
  backendRate(id: string): number {
    return this.#backendRates.get(id) ?? 0;
  }

  /** The latest requests-per-second backend `id` served (app/metrics/backend-traffic.ts; 0 before the second sample). */
  backendRequestRate(id: string): number {
    return this.#requestRates.get(id) ?? 0;
  }

  /** Connections ended per listener since start (every result). */
  listenerTotals(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [key, v] of this.#last?.conns ?? []) {
      const listener = key.split('\u0000')[0] ?? '';
      out.set(listener, (out.get(listener) ?? 0) + v);
    }
    return out;
  }

  /** Cumulative counts since start: connections by result, requests by `product/cluster`. */
  totals(): { results: Record<string, number>; clusters: Record<string, number> } {
    const results: Record<string, number> = {};
    for (const [key, v] of this.#last?.conns ?? []) {
      const result = key.split('\u0000')[1] ?? 'other';
      results[result] = (results[result] ?? 0) + v;
    }
    return { results, clusters: Object.fromEntries(this.#last?.requests ?? []) };
  }
}
