/**
 * The scenarios, each measured once per target per round:
 *
 * 1. keepalive: small requests over 64 keep-alive connections → req/s (p50/p99 beside it).
 * 2. newconn: `Connection: close` on 32 connections, so every request is a new connection → conn/s.
 * 3. big: 1 MiB responses over 8 connections → MiB/s.
 * 4. idle: N keep-alive connections held open → KiB of RSS growth per connection (fresh target).
 * 5. tlsconn (group `tls`): `Connection: close` over HTTPS on 32 connections, so every request
 *    is a full TLS handshake through the target (the backend never resumes) → conn/s.
 * 6. h2 (group `h2`): `h2load -c10 -m10` over h2c → req/s (p50/p99 beside it).
 */

import { h2loadMissing, runH2load } from './h2load.ts';
import { measureIdle } from './idle.ts';
import { runLoad } from './loadgen.ts';
import { TLS_HOST } from './peers-tls.ts';
import { BIG_PATH, SMALL_PATH } from './scenarios-shared.ts';
import type { Metric, Scenario } from './types.ts';

const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;

/** Every scenario, in table order. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'keepalive',
    title: 'keep-alive small requests',
    fresh: false,
    async measure(t, o): Promise<Metric> {
      const spec = { url: url(t.port, SMALL_PATH), connections: 64, durationSec: o.durationSec, close: false };
      const r = await runLoad(spec, o.loadgen, o.spawn);
      return {
        value: r.rps,
        unit: 'req/s',
        higherIsBetter: true,
        extra: { p50ms: r.p50Ms, p99ms: r.p99Ms, errors: r.errors },
      };
    },
  },
  {
    name: 'newconn',
    title: 'new connection per request',
    fresh: false,
    // New connections reach V8's optimised code only after ~10,000 (bench/README.md "Warm-up").
    warmupSec: 5,
    async measure(t, o): Promise<Metric> {
      const spec = { url: url(t.port, SMALL_PATH), connections: 32, durationSec: o.durationSec, close: true };
      const r = await runLoad(spec, o.loadgen, o.spawn);
      return {
        value: r.rps,
        unit: 'conn/s',
        higherIsBetter: true,
        extra: { p50ms: r.p50Ms, p99ms: r.p99Ms, errors: r.errors },
      };
    },
  },
  {
    name: 'big',
    title: '1 MiB responses',
    fresh: false,
    async measure(t, o): Promise<Metric> {
      const spec = { url: url(t.port, BIG_PATH), connections: 8, durationSec: o.durationSec, close: false };
      const r = await runLoad(spec, o.loadgen, o.spawn);
      return {
        value: r.bytesPerSec / (1 << 20),
        unit: 'MiB/s',
        higherIsBetter: true,
        extra: { rps: r.rps, errors: r.errors },
      };
    },
  },
  {
    name: 'idle',
    title: 'idle keep-alive connections held',
    fresh: true,
    async measure(t, o): Promise<Metric> {
      const kib = await measureIdle(t.port, () => t.pids(), o.idleConnections);
      return { value: kib, unit: 'KiB/conn', higherIsBetter: false, extra: { connections: o.idleConnections } };
    },
  },
  {
    name: 'tlsconn',
    title: 'new TLS connection per request (passthrough)',
    fresh: false,
    // New connections reach V8's optimised code only after ~10,000 (bench/README.md "Warm-up").
    warmupSec: 5,
    group: 'tls',
    // wrk sends SNI from the URL's host and does not resume sessions; autocannon is not checked.
    available: (loadgen) => (loadgen === 'wrk' ? undefined : 'needs wrk (https with SNI)'),
    async measure(t, o): Promise<Metric> {
      const spec = {
        url: `https://${TLS_HOST}:${t.port}${SMALL_PATH}`,
        connections: 32,
        durationSec: o.durationSec,
        close: true,
      };
      const r = await runLoad(spec, o.loadgen, o.spawn);
      return {
        value: r.rps,
        unit: 'TLS conn/s',
        higherIsBetter: true,
        extra: { p50ms: r.p50Ms, p99ms: r.p99Ms, errors: r.errors },
      };
    },
  },
  {
    name: 'h2',
    title: 'HTTP/2 (h2c), h2load -c10 -m10',
    fresh: false,
    group: 'h2',
    available: () => h2loadMissing(),
    async measure(t, o): Promise<Metric> {
      const spec = {
        url: url(t.port, SMALL_PATH),
        connections: 10,
        streams: 10,
        durationSec: o.durationSec,
        dir: o.dir,
      };
      const r = await runH2load(spec, o.spawn);
      return {
        value: r.rps,
        unit: 'h2 req/s',
        higherIsBetter: true,
        extra: { p50ms: r.p50Ms, p99ms: r.p99Ms, errors: r.errors },
      };
    },
  },
];
