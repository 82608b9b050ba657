/**
 * Issue 16's done-criterion for the upstream pipeline: an h2c backend (the gRPC example server,
 * its own process) is killed and restarted under steady gRPC traffic through the http2 panel.
 * While it is down every call fails fast with UNAVAILABLE (within the connect timeout; never a
 * hang), and calls succeed again shortly after it is back. Before the fix, the upstream socket
 * was half-open, the pooled session never saw the FIN and every later call hung.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect as h2connect } from 'node:http2';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoClient, echoClient } from '../../examples/grpc/service.ts';
import { closedPort } from '../harness/backend.ts';
import { eventually, startTestRouter, type TestRouter } from '../harness/router.ts';
import { h2Request, startH2Backend } from './http2-helpers.ts';

const SERVER = fileURLToPath(new URL('../../examples/grpc/server.ts', import.meta.url));
const CONNECT_TIMEOUT_MS = 1_000;
const HEALTH_INTERVAL_MS = 200;

interface Call {
  readonly started: number;
  ended?: number;
  code?: number;
}

/** Starts the example gRPC server as a child process; resolves once it listens. */
async function startServer(port: number): Promise<{ child: ChildProcess; listeningAt: number }> {
  const child = spawn(process.execPath, [SERVER, `127.0.0.1:${port}`, 'echo-1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const listeningAt = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('echo gRPC server')) resolve(performance.now());
    });
    child.once('exit', (code) => reject(new Error(`gRPC server exited with ${code}`)));
    child.once('error', reject);
  });
  return { child, listeningAt };
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('http2 panel: an h2c backend killed and restarted under steady gRPC traffic', () => {
  let router: TestRouter;
  let client: EchoClient;
  let server: ChildProcess | undefined;
  let port: number;

  beforeAll(async () => {
    port = await closedPort();
    server = (await startServer(port)).child;
    router = await startTestRouter({
      panel: 'http2',
      limits: { connectTimeout: CONNECT_TIMEOUT_MS },
      addressBook: {
        name: 'bfe',
        products: { echo: { hosts: ['echo.test'], rules: [{ cond: 'default_t()', cluster: 'echo' }] } },
        clusters: {
          echo: {
            protocol: 'h2c',
            retries: 0,
            healthCheck: { interval: HEALTH_INTERVAL_MS, timeout: HEALTH_INTERVAL_MS },
            subclusters: { s: { weight: 1, backends: [{ address: `127.0.0.1:${port}` }] } },
          },
        },
      },
    });
    client = echoClient(`127.0.0.1:${router.port()}`, { 'grpc.default_authority': 'echo.test' });
  });
  afterAll(async () => {
    client?.close();
    await router?.close();
    if (server !== undefined) await kill(server);
  });

  it('fails fast with UNAVAILABLE while down, succeeds again once it is back', async () => {
    const calls: Call[] = [];
    const call = () => {
      const c: Call = { started: performance.now() };
      calls.push(c);
      // The deadline is far beyond every bound asserted: a call that reaches it has hung.
      client.Say({ message: 'ping' }, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (err) => {
        c.ended = performance.now();
        c.code = err === null ? grpc.status.OK : err.code;
      });
    };
    const traffic = setInterval(call, 20);
    try {
      const okAfter = (t: number) => calls.some((c) => c.started >= t && c.code === grpc.status.OK);
      await eventually(() => okAfter(0), 10_000, 'calls succeeding');

      await kill(server!);
      server = undefined;
      const downAt = performance.now();
      const downCalls = () => calls.filter((c) => c.started >= downAt);
      await eventually(
        () => downCalls().filter((c) => c.ended !== undefined).length >= 20,
        10_000,
        '20 calls while down',
      );
      for (const c of downCalls().filter((d) => d.ended !== undefined)) {
        expect(c.code).toBe(grpc.status.UNAVAILABLE);
        expect(c.ended! - c.started).toBeLessThan(CONNECT_TIMEOUT_MS);
      }

      const restarted = await startServer(port);
      server = restarted.child;
      const backAt = restarted.listeningAt;
      await eventually(() => okAfter(backAt), 10_000, 'a call succeeding after the restart');
      const firstOk = calls.filter((c) => c.started >= backAt && c.code === grpc.status.OK)[0]!;
      const recoveryMs = firstOk.ended! - backAt;
      console.log(`recovered ${Math.round(recoveryMs)} ms after the backend listened again`);
      expect(recoveryMs).toBeLessThan(1_000 + HEALTH_INTERVAL_MS);
      // Steady again: the calls after the first success succeed.
      const settledAt = performance.now();
      await eventually(() => calls.filter((c) => c.started >= settledAt && c.code === grpc.status.OK).length >= 10);
    } finally {
      clearInterval(traffic);
    }
    // Nothing hung: every call ended, and none by its deadline.
    await eventually(() => calls.every((c) => c.ended !== undefined), 10_000, 'every call to end');
    expect(calls.filter((c) => c.code === grpc.status.DEADLINE_EXCEEDED)).toEqual([]);
  });
});

describe('http2 panel: an h2c backend that half-closes its connection', () => {
  it('the upstream session closes at once (no CLOSE-WAIT) and the next stream gets a new one', async () => {
    const backend = await startH2Backend('fin');
    const raw = new Set<Socket>();
    backend.server.on('connection', (s: Socket) => raw.add(s));
    const router = await startTestRouter({
      panel: 'http2',
      addressBook: {
        name: 'bfe',
        products: { fin: { hosts: ['fin.test'], rules: [{ cond: 'default_t()', cluster: 'fin' }] } },
        clusters: {
          fin: { protocol: 'h2c', subclusters: { s: { weight: 1, backends: [{ address: backend.address }] } } },
        },
      },
    });
    const session = h2connect(`http://127.0.0.1:${router.port()}`);
    session.on('error', () => {});
    try {
      const get = { ':method': 'GET', ':path': '/', ':authority': 'fin.test' };
      expect((await h2Request(session, get)).status).toBe(200);
      const registry = router.router.runtime.registry;
      expect(registry.get(backend.address).active).toBe(1);
      // A FIN without GOAWAY (a backend process going away): the router must close its side.
      for (const s of raw) s.end();
      await eventually(() => registry.get(backend.address).active === 0, 10_000, 'the upstream socket closed');
      expect((await h2Request(session, get)).status).toBe(200);
      expect(backend.sessions).toBe(2);
    } finally {
      session.close();
      await router.close();
      await backend.close();
    }
  });
});
