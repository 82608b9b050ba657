/**
 * Holds the admin listener's port while the traffic listeners bind (issue 45 item 8): the admin
 * listener starts last (it serves the parts started before it), so a port already in use there
 * used to fail the start after every traffic listener had logged `listening`, and those were
 * then dropped. `holdPort` binds the admin address first, with nothing served, and fails the
 * start before any listener binds; `release` frees it just before the admin listener binds it
 * for good. Port 0 cannot be in use, but its host can be wrong (not an address of this
 * machine): it is bound once to check and released at once, so that fails before any listener
 * binds too.
 *
 * While held, the port accepts (the kernel completes handshakes on a listening socket) but serves
 * nothing: each connection is destroyed at once. A connection left open there (a probe of
 * `/readyz` during the start, its request unread) kept `server.close()` waiting for it, and the
 * start hung before the admin listener bound (the fleet example's routers did, CI failed so).
 */
import { createServer } from 'node:net';
import { listenError } from '../src/listener/bind.ts';

/** Binds `host:port` (the error names `where`); resolves with the release (once; later calls wait for it). */
export async function holdPort(where: string, host: string, port: number): Promise<() => Promise<void>> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(listenError(where, host, port, e)));
    server.listen({ host, port, exclusive: true }, () => resolve());
  });
  if (port === 0) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return async () => {};
  }
  let released: Promise<void> | undefined;
  return () => (released ??= new Promise<void>((resolve) => server.close(() => resolve())));
}
