/**
 * The http2 panel out of descriptors (`ulimit -n 64`, real CLI): streams whose upstream connect
 * fails with EMFILE are answered 503 `overloaded`, the shortage is logged and counted, and the
 * backend's health is left alone (issue 16: the panel's own copy of the retry loop used to count
 * EMFILE against the backend).
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { connect as h2connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { spawnCli } from '../harness/cli.ts';
import { parsePrometheus, sum } from '../harness/prometheus.ts';
import { eventually, tempDir } from '../harness/router.ts';
import { type H2Reply, h2Request } from './http2-helpers.ts';

it('http2 panel, ulimit -n 64: EMFILE answers 503 overloaded and leaves the backend up', async () => {
  // A backend that holds every response until released, so each stream keeps its connection busy.
  const held: ServerResponse[] = [];
  const backend = createServer((_req, res) => held.push(res));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
  const address = `127.0.0.1:${(backend.address() as AddressInfo).port}`;
  const dir = await tempDir({ 'servers.yaml': `- { host: "*", backends: [${address}], retries: 0 }\n` });
  const file = join(dir, 'switchboard.yaml');
  await writeFile(
    file,
    [
      'panel: http2',
      'listeners: [{ name: web, address: 127.0.0.1:0 }]',
      'addressBook: { name: file, path: servers.yaml, watch: false }',
      // The admin listener's connections are in the nofile check (issue 39): 16 of them here, and the
      // http2 panel's 1 per connection: 16 × 1 + 32 + 16 = 64.
      'admin: { address: 127.0.0.1:0, maxConnections: 16 }',
      'limits: { maxConnections: 16, maxIdleUpstreamsPerConnection: 0, drainTimeout: 1s, idleTimeout: 1s }',
      'log: { access: "off" }',
    ].join('\n'),
  );
  const cli = spawnCli(file, { ulimit: 64 });
  const session = h2connect(`http://127.0.0.1:${await cli.port('web')}`);
  session.on('error', () => {});
  try {
    const started = await cli.waitForLog((l) => l.msg === 'switchboard started');
    const admin = Number(String(started.admin).split(':').pop());
    // More streams than descriptors: the pool's connects run out of them.
    const replies: Promise<H2Reply>[] = [];
    for (let i = 0; i < 80; i++) {
      replies.push(h2Request(session, { ':method': 'GET', ':path': `/${i}`, ':authority': 'a.test' }));
    }
    const answered: H2Reply[] = [];
    for (const p of replies) void p.then((r) => answered.push(r));
    await eventually(() => answered.some((r) => r.status === 503), 10_000, 'a 503');
    const shed = answered.filter((r) => r.status === 503);
    for (const r of shed) expect(r.headers['x-switchboard-error']).toBe('overloaded');
    await cli.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('out of file descriptors'));
    // Release the held responses: every stream that got a connection completes.
    await eventually(() => held.length + answered.length >= 80, 10_000, 'every stream placed');
    for (const res of held.splice(0)) res.end('ok');
    const all = await Promise.all(replies);
    expect(all.filter((r) => r.status === 200).length).toBe(80 - shed.length);
    // Idle upstream connections close after idleTimeout; then the admin port accepts again.
    session.close();
    let text = '';
    await eventually(
      async () => {
        try {
          text = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
          return true;
        } catch {
          return false;
        }
      },
      10_000,
      'the metrics',
    );
    const metrics = parsePrometheus(text);
    expect(sum(metrics, 'switchboard_fd_exhausted_total')).toBeGreaterThan(0);
    expect(sum(metrics, 'switchboard_backend_up', { backend: address })).toBe(1);
  } finally {
    session.destroy();
    cli.kill('SIGTERM');
    await cli.exited;
    backend.closeAllConnections();
    await new Promise((r) => backend.close(r));
  }
});
