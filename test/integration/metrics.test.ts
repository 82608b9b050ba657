/**
 * `GET /metrics` (issue 7 §2): the exposition parses line by line as Prometheus text, and the
 * counters equal what the test sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { httpGet } from '../harness/http.ts';
import { parsePrometheus, sum } from '../harness/prometheus.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

describe('prometheus text parser (harness)', () => {
  it.each([
    ['a_total 1', true],
    ['a_total{x="1",y="two"} 2.5', true],
    ['a_bucket{le="+Inf"} 3 1700000000000', true],
    ['# HELP a_total some help', true],
    ['# TYPE a_total counter', true],
    ['# TYPE a_total bogus', false],
    ['a total 1', false],
    ['a_total{x=1} 1', false],
    ['a_total{x="1"} one', false],
    ['1a 1', false],
  ])('%s → valid %s (exposition format 0.0.4)', (line, valid) => {
    if (valid) expect(() => parsePrometheus(line)).not.toThrow();
    else expect(() => parsePrometheus(line)).toThrow(/line 1/);
  });
});

describe('GET /metrics', () => {
  let a: TestBackend;
  let router: TestRouter;
  let dead: number;

  beforeAll(async () => {
    a = await startHttpBackend('a');
    dead = await closedPort();
    router = await startTestRouter(
      {
        operator: 'round-robin',
        addressBook: { name: 'file', path: 'servers.yaml' },
        admin: { address: '127.0.0.1:0' },
        // One access line per connection, so the test can compare connection counters with it.
        log: { accessMode: 'per-connection' },
      },
      {
        dir: await tempDir({
          'servers.yaml': [
            `- { host: www.example.test, backends: [${a.address}] }`,
            `- { host: retry.example.test, backends: [127.0.0.1:${dead}, ${a.address}] }`,
          ].join('\n'),
        }),
      },
    );
  });
  afterAll(async () => {
    await router.close();
    await a.close();
  });

  async function scrape() {
    const res = await fetch(`http://127.0.0.1:${router.router.admin!.address().port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return parsePrometheus(await res.text());
  }

  it('counts connections by result, bytes, durations, retries, backends, reloads and the config version', async () => {
    const ok = 5;
    const missing = 3;
    let bytesIn = 0;
    for (let i = 0; i < ok; i++) expect((await httpGet(router.port())).status).toBe(200);
    for (let i = 0; i < missing; i++)
      expect((await httpGet(router.port(), '/', { host: 'nowhere.test' })).status).toBe(404);
    // Round robin starting on the dead backend: one failed attempt, then a retry that succeeds.
    const retried = await httpGet(router.port(), '/', { host: 'retry.example.test' });
    expect(retried.status).toBe(200);
    await router.waitForAccess(ok + missing + 1);
    for (const r of router.access) bytesIn += r.bytesIn;
    await router.router.reload();

    const m = await scrape();
    expect(m.types.get('switchboard_connections_total')).toBe('counter');
    expect(m.types.get('switchboard_connection_duration_seconds')).toBe('histogram');
    expect(sum(m, 'switchboard_connections_total', { listener: 'web', result: 'ok' })).toBe(ok + 1);
    expect(sum(m, 'switchboard_connections_total', { result: 'no_route' })).toBe(missing);
    expect(sum(m, 'switchboard_bytes_total', { direction: 'in' })).toBe(bytesIn);
    expect(sum(m, 'switchboard_bytes_total', { direction: 'out' })).toBeGreaterThan(0);
    expect(sum(m, 'switchboard_connection_duration_seconds_count')).toBe(ok + missing + 1);
    expect(sum(m, 'switchboard_peek_duration_seconds_count')).toBe(ok + missing + 1);
    expect(sum(m, 'switchboard_upstream_connect_duration_seconds_count', { outcome: 'ok' })).toBe(ok + 1);
    expect(sum(m, 'switchboard_upstream_connect_duration_seconds_count', { outcome: 'failed' })).toBe(1);
    expect(sum(m, 'switchboard_upstream_retries_total')).toBe(1);
    expect(sum(m, 'switchboard_backend_up', { backend: a.address })).toBe(1);
    expect(sum(m, 'switchboard_backend_active_connections', { backend: a.address })).toBe(0);
    expect(sum(m, 'switchboard_reloads_total', { result: 'unchanged' })).toBe(1);
    expect(sum(m, 'switchboard_reloads_total', { result: 'failed' })).toBe(0);
    expect(sum(m, 'switchboard_config_info', { version: router.router.runtime.engine.version })).toBe(1);
    expect(sum(m, 'switchboard_fd_exhausted_total')).toBe(0);
  });

  it('shows open connections per listener while one is held', async () => {
    const { connect } = await import('node:net');
    const held = connect({ port: router.port(), host: '127.0.0.1' });
    await new Promise<void>((r) => held.once('connect', () => r()));
    try {
      let open = 0;
      for (let i = 0; i < 100 && open === 0; i++) {
        open = sum(await scrape(), 'switchboard_connections_open', { listener: 'web' });
        if (open === 0) await new Promise((r) => setTimeout(r, 20));
      }
      expect(open).toBe(1);
    } finally {
      held.destroy();
    }
  });
});
