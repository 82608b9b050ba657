/**
 * Leak checks shared by the adversarial suites: open sockets and timers of this process (router
 * and test clients live in the same process under vitest's forks pool) and the panel's own
 * connection count must come back to where they were before a scenario.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { CHANNEL_NAMES } from '../../src/base/diagnostics.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import { eventually, type TestRouter } from '../harness/router.ts';

/** Counts of active libuv resources by type (TCPSocketWrap, Timeout, …). */
export function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

/** The panel's open client connections (net panel `connections` getter). */
export function openConnections(router: TestRouter): number {
  return (router.router.panel as unknown as { connections: number }).connections;
}

/**
 * Waits until the panel holds no connection and there are no more sockets and timers than in
 * `baseline` (+ `slack` timers for unref'd lingers that end on their own); throws naming what leaked.
 */
export async function expectNoLeaks(
  router: TestRouter,
  baseline: Record<string, number>,
  timeoutMs = 15_000,
  slack = 0,
): Promise<void> {
  let last = '';
  try {
    await eventually(
      () => {
        const now = resources();
        const sockets = now.TCPSocketWrap ?? 0;
        const timers = now.Timeout ?? 0;
        last = `panel connections ${openConnections(router)}, sockets ${sockets} (baseline ${baseline.TCPSocketWrap ?? 0}), timers ${timers} (baseline ${baseline.Timeout ?? 0})`;
        return (
          openConnections(router) === 0 &&
          sockets <= (baseline.TCPSocketWrap ?? 0) &&
          timers <= (baseline.Timeout ?? 0) + slack
        );
      },
      timeoutMs,
      'no leaked sockets or timers',
    );
  } catch {
    throw new Error(`leak: ${last}`);
  }
}

/** Collects the router-side client sockets accepted while it is subscribed. */
export function acceptedSockets(): { readonly sockets: Socket[]; stop(): void } {
  const sockets: Socket[] = [];
  const on = (m: unknown) => sockets.push((m as { socket: Socket }).socket);
  const name = CHANNEL_NAMES.accept as string;
  subscribe(name, on);
  return { sockets, stop: () => unsubscribe(name, on) };
}

/** Polls `read` until it stops changing for `quietPolls` polls in a row; returns its value. */
export async function settle(read: () => number, quietPolls = 5, everyMs = 100, timeoutMs = 20_000): Promise<number> {
  let last = read();
  let quiet = 0;
  const until = Date.now() + timeoutMs;
  while (quiet < quietPolls && Date.now() < until) {
    await new Promise((r) => setTimeout(r, everyMs));
    const now = read();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

/** Connection access lines (per-request lines, `line: 'request'`, left out). */
export function connectionLines(router: TestRouter): AccessRecord[] {
  return router.access.filter((r) => r.line === undefined);
}

/** Waits until `n` connection lines exist (request lines do not count) and returns them. */
export async function waitForConnections(router: TestRouter, n: number, timeoutMs = 15_000): Promise<AccessRecord[]> {
  await eventually(() => connectionLines(router).length >= n, timeoutMs, `${n} connection access lines`);
  return connectionLines(router);
}

/**
 * The result the access log gives the first connection: its connection line's, or with
 * per-request lines the first request result that is not ok (else ok). Waits for a line.
 */
export async function firstResult(router: TestRouter, timeoutMs = 15_000): Promise<string | undefined> {
  await eventually(() => router.access.length > 0, timeoutMs, 'an access line');
  // A request line may precede the connection's end: give the connection a moment to log too.
  await eventually(
    () => connectionLines(router).length > 0 || openConnections(router) === 0,
    timeoutMs,
    'connection end',
  );
  const conn = connectionLines(router)[0];
  if (conn !== undefined) return conn.result;
  return router.access.find((r) => r.result !== 'ok')?.result ?? router.access[0]?.result;
}
