/**
 * A TCP relay on a chosen loopback port that holds every connection it accepts until the test
 * says where to send it: `steer(port)` forwards the held ones and every later one to
 * 127.0.0.1:port, `steer(undefined)` holds again, `dropHeld()` closes the held ones. Put in
 * front of a CA's validation (pebble's `httpPort` / `tlsPort`), it decides which router answers
 * a challenge, and when, without any timing.
 */
import { createServer, connect as netConnect, type Socket } from 'node:net';

export interface HeldRelay {
  readonly port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections accepted and waiting for `steer`. */
  held(): number;
  /** Forwards held and later connections to 127.0.0.1:`port`; undefined holds them. */
  steer(port: number | undefined): void;
  /** Closes every held connection. */
  dropHeld(): void;
  close(): Promise<void>;
}

/** Starts the relay on 127.0.0.1:`port` (a free port the test chose). */
export async function startHeldRelay(port: number): Promise<HeldRelay> {
  const sockets = new Set<Socket>();
  const waiting = new Set<Socket>();
  let target: number | undefined;
  let accepted = 0;
  const forward = (client: Socket, to: number) => {
    waiting.delete(client);
    const upstream = netConnect({ port: to, host: '127.0.0.1' });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  };
  const server = createServer({ pauseOnConnect: true }, (client) => {
    accepted++;
    sockets.add(client);
    client.on('close', () => {
      sockets.delete(client);
      waiting.delete(client);
    });
    client.on('error', () => client.destroy());
    if (target === undefined) waiting.add(client);
    else forward(client, target);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port,
    accepted: () => accepted,
    held: () => waiting.size,
    steer(to) {
      target = to;
      if (to !== undefined) for (const c of [...waiting]) forward(c, to);
    },
    dropHeld() {
      for (const c of [...waiting]) c.destroy();
      waiting.clear();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
