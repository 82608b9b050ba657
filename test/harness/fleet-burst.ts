/**
 * Bursts for the fleet limit tests: `n` HTTP/1.1 requests at once, one per connection, spread
 * over `ports` (alternating), every connection made before the clock starts, optionally from a
 * chosen loopback source address (so a test behind a PROXY v2 front can play several clients).
 * `most(b)` is the most a rate limit may pass over the burst's window.
 */
import { connect, type Socket } from 'node:net';

export interface Burst {
  /** Status → how many replies had it (0: no reply, the connection closed first). */
  readonly statuses: Map<number, number>;
  /** Milliseconds from the write to the whole response, sorted. */
  readonly latencies: number[];
}

const GET = 'GET / HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n';

function connected(port: number, localAddress: string | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', ...(localAddress !== undefined ? { localAddress } : {}) });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** Writes one request on `s` and resolves with the status and the time to the reply's end. */
function exchange(s: Socket, request: string): Promise<[number, number]> {
  return new Promise((resolve) => {
    const t = performance.now();
    let reply = '';
    s.on('data', (d: Buffer) => {
      if (reply.length < 16) reply += d.toString('latin1');
    });
    s.on('error', () => {});
    s.once('close', () => resolve([Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0), performance.now() - t]));
    s.setTimeout(10_000, () => s.destroy());
    s.write(request);
  });
}

/** `n` requests at once over `ports`, from `localAddress` when given; `head`: each request (with Connection: close). */
export async function burst(
  ports: readonly number[],
  n: number,
  localAddress?: string,
  head: string = GET,
): Promise<Burst> {
  const sockets = await Promise.all(
    Array.from({ length: n }, (_, i) => connected(ports[i % ports.length] as number, localAddress)),
  );
  const replies = await Promise.all(sockets.map((s) => exchange(s, head)));
  const statuses = new Map<number, number>();
  for (const [status] of replies) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  return { statuses, latencies: replies.map(([, ms]) => ms).sort((a, b) => a - b) };
}

/** The 99th percentile latency of `b`, in ms. */
export const p99 = (b: Burst): number => b.latencies[Math.ceil(b.latencies.length * 0.99) - 1] ?? 0;

/**
 * The most a `rate`/s burst-`burst` limit may pass over `b`: the burst, the refill over the
 * burst's window (a loaded machine takes hundreds of ms to get 200 requests through), and 2 for
 * what is spent during a sync's round trip.
 */
export const most = (b: Burst, rate = 20, burstSize = 20): number =>
  burstSize + 2 + Math.floor((rate * (b.latencies[b.latencies.length - 1] ?? 0)) / 1000);
