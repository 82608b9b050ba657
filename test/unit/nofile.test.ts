/**
 * The descriptor budget (src/process/nofile.ts, issue 17 item 7): what one client connection may hold
 * per routing mode and `limits.maxIdleUpstreamsPerConnection`, and the check at start and reload.
 */
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../app/load-config.ts';
import { panelReserve, perConnection } from '../../app/runtime/runtime.ts';
import { THREAD_DESCRIPTORS } from '../../panels/worker/panel.ts';
import { configSchema, limitsSchema } from '../../src/config/schema.ts';
import {
  adminDescriptors,
  checkNofile,
  descriptorsPerConnection,
  maxConnectionsFor,
  NOFILE_RESERVE,
  type NofileConfig,
} from '../../src/process/nofile.ts';

const config = (routing: 'per-request' | 'per-connection', limits: Record<string, unknown> = {}): NofileConfig => ({
  routing,
  limits: limitsSchema.parse(limits),
});

describe('nofile budget', () => {
  it('the default: per-request routing keeps 2 idle upstreams per connection', () => {
    expect(limitsSchema.parse({}).maxIdleUpstreamsPerConnection).toBe(2);
    expect(descriptorsPerConnection(config('per-request'))).toBe(4);
    expect(NOFILE_RESERVE).toBe(32);
  });

  it.each([
    // routing, maxIdleUpstreamsPerConnection, descriptors per connection
    ['per-connection', 2, 2], // client + backend; no pool
    ['per-connection', 8, 2],
    ['per-request', 0, 2], // client + current upstream
    ['per-request', 2, 4], // + 2 idle
    ['per-request', 4, 6],
  ] as const)('routing %s, %i idle upstreams → %i descriptors per connection', (routing, idle, each) => {
    expect(descriptorsPerConnection(config(routing, { maxIdleUpstreamsPerConnection: idle }))).toBe(each);
  });

  it.each([
    // nofile, routing, maxConnections, maxIdleUpstreamsPerConnection, fits
    [64, 'per-connection', 16, 2, true], // 16 × 2 + 32 = 64
    [64, 'per-connection', 17, 2, false],
    [64, 'per-request', 16, 0, true], // 16 × 2 + 32 = 64
    [64, 'per-request', 16, 2, false], // 16 × 4 + 32 = 96
    [64, 'per-request', 8, 2, true], // 8 × 4 + 32 = 64
    [20_000, 'per-request', 4096, 2, true], // the defaults: 4096 × 4 + 32 = 16,416
    [20_000, 'per-request', 4096, 4, false], // 4096 × 6 + 32 = 24,608
    [16_415, 'per-request', 4096, 2, false],
    [16_416, 'per-request', 4096, 2, true],
  ] as const)('nofile %i, %s, maxConnections %i, %i idle → fits %s', (nofile, routing, max, idle, fits) => {
    const c = config(routing, { maxConnections: max, maxIdleUpstreamsPerConnection: idle });
    expect(maxConnectionsFor(nofile, descriptorsPerConnection(c)) >= max).toBe(fits);
    if (fits) expect(() => checkNofile('f.yaml', c, nofile)).not.toThrow();
    else expect(() => checkNofile('f.yaml', c, nofile)).toThrow(/limits\.maxConnections: /);
  });

  it('the error names the arithmetic and both ways out', () => {
    const c = config('per-request', { maxConnections: 16, maxIdleUpstreamsPerConnection: 2 });
    expect(() => checkNofile('f.yaml', c, 64)).toThrow(
      /16 connections need 96 file descriptors \(4 each: client, upstream and limits\.maxIdleUpstreamsPerConnection 2 idle upstreams; 32 reserved\) but the nofile limit is 64; lower it to 8, or lower maxIdleUpstreamsPerConnection \(0: 2 per connection, fits 16\)/,
    );
    expect(() => checkNofile('f.yaml', config('per-connection', { maxConnections: 17 }), 64)).toThrow(
      /17 connections need 66 file descriptors \(2 each: client and backend; 32 reserved\).*lower it to 16 or raise ulimit -n/,
    );
  });

  it('the admin listener is counted: admin.maxConnections descriptors beside the reserve (issue 39)', () => {
    const c = (admin?: number): NofileConfig => ({
      ...config('per-connection', { maxConnections: 16 }),
      ...(admin === undefined ? {} : { admin: { maxConnections: admin } }),
    });
    expect(() => checkNofile('f.yaml', c(), 64)).not.toThrow(); // 16 × 2 + 32 = 64
    expect(() => checkNofile('f.yaml', c(64), 64)).toThrow(
      /16 connections need 128 file descriptors \(2 each: client and backend; 32 reserved, 64 for admin\.maxConnections\) but the nofile limit is 64; lower it to 0, lower admin\.maxConnections or raise ulimit -n/,
    );
    expect(() => checkNofile('f.yaml', c(8), 80)).not.toThrow(); // 16 × 2 + 32 + 8 = 72
    expect(maxConnectionsFor(256, 2, 64)).toBe(80);
    // The default admin cap is what a config with an admin section is checked with.
    const loaded = configSchema.parse({ listeners: [{ name: 'web', address: '127.0.0.1:0' }], admin: {} });
    expect(adminDescriptors(loaded)).toBe(64);
    expect(adminDescriptors({})).toBe(0);
  });

  it('maxIdleUpstreamsPerConnection is bounded: 0 to 64', () => {
    expect(limitsSchema.safeParse({ maxIdleUpstreamsPerConnection: -1 }).success).toBe(false);
    expect(limitsSchema.safeParse({ maxIdleUpstreamsPerConnection: 65 }).success).toBe(false);
    expect(limitsSchema.safeParse({ maxIdleUpstreamsPerConnection: 1.5 }).success).toBe(false);
    expect(limitsSchema.parse({ maxIdleUpstreamsPerConnection: 64 }).maxIdleUpstreamsPerConnection).toBe(64);
  });
});

describe('nofile budget per panel (DescriptorBudget, src/panel/capabilities.ts)', () => {
  const load = (panel: unknown) =>
    validateConfig(
      { panel, listeners: [{ name: 'web', address: '127.0.0.1:0' }], limits: { maxConnections: 9000 } },
      '/tmp/switchboard.yaml',
      '',
    );

  it.each([
    ['net', 4],
    ['http2', 1],
    [{ name: 'worker', threads: 2, engine: 'net' }, 4],
    [{ name: 'worker', threads: 2, engine: 'http2' }, 1],
  ])('%j holds %i per connection in per-request routing', async (panel, each) => {
    const loaded = await load(panel);
    expect(perConnection(loaded)).toBe(each);
  });

  it('the http2 panel fits 9,000 connections in 20,000 descriptors; the net panel in per-request routing does not', async () => {
    const http2 = await load('http2');
    expect(() => checkNofile('f', http2.config, 20_000, perConnection(http2))).not.toThrow();
    const net = await load('net');
    expect(() => checkNofile('f', net.config, 20_000, perConnection(net))).toThrow(/limits\.maxConnections: 9000/);
  });
});

describe("worker threads' own descriptors (DescriptorBudget.reservedDescriptors)", () => {
  const load = (panel: unknown, listeners = 1) =>
    validateConfig(
      {
        panel,
        listeners: Array.from({ length: listeners }, (_, i) => ({ name: `l${i}`, address: '127.0.0.1:0' })),
        limits: { maxConnections: 80, maxIdleUpstreamsPerConnection: 0 },
      },
      '/tmp/switchboard.yaml',
      '',
    );

  it.each([
    ['net', 1, 0],
    ['http2', 3, 0],
    [{ name: 'worker', threads: 2, engine: 'net' }, 1, 2 * (THREAD_DESCRIPTORS + 1)],
    [{ name: 'worker', threads: 4, engine: 'http2' }, 3, 4 * (THREAD_DESCRIPTORS + 3)],
  ])('%j with %i listeners holds %i apart from its connections', async (panel, listeners, reserve) => {
    expect(panelReserve(await load(panel, listeners))).toBe(reserve);
  });

  it('a budget the main thread fills exactly is refused for two worker threads, naming their share', async () => {
    // 80 × 2 + 32 reserved = 192: exactly the nofile limit for net; two threads hold 18 more.
    const net = await load('net');
    expect(() => checkNofile('f', net.config, 192, perConnection(net), panelReserve(net))).not.toThrow();
    const worker = await load({ name: 'worker', threads: 2, engine: 'net' });
    expect(() => checkNofile('f', worker.config, 192, perConnection(worker), panelReserve(worker))).toThrow(
      /80 connections need 210 file descriptors \(2 each: client and backend; 32 reserved, 18 for the panel's threads and their listeners\) but the nofile limit is 192; lower it to 71 or raise ulimit -n/,
    );
  });
});
