/**
 * app/port-hold.ts: a held port fails a second bind with a line naming where; a connection made
 * to the held port (a readiness probe during the start) is closed by the hold, and the release
 * does not wait for it (a probe left open there made the release, and the start, hang).
 */
import { connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { holdPort } from '../../app/port-hold.ts';

/** A free loopback port (bound then released). */
function freePort(): Promise<number> {
  const s = createServer();
  return new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    }),
  );
}

describe('holdPort', () => {
  it('a second bind of a held port fails naming the config key', async () => {
    const port = await freePort();
    const release = await holdPort('admin.address', '127.0.0.1', port);
    await expect(holdPort('admin.address', '127.0.0.1', port)).rejects.toThrow(
      `admin.address: 127.0.0.1:${port} is in use (EADDRINUSE)`,
    );
    await release();
  });

  it('a client that connects, writes a request and half-closes is closed by the hold; the release then resolves and frees the port', async () => {
    const port = await freePort();
    const release = await holdPort('admin.address', '127.0.0.1', port);
    const client = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    client.on('error', () => {});
    client.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    client.end();
    const closed = await Promise.race([
      new Promise((resolve) => client.once('close', () => resolve('closed'))),
      new Promise((resolve) => setTimeout(() => resolve('left open'), 5000).unref()),
    ]);
    expect(closed).toBe('closed');
    // A second probe still open when the release comes.
    const open = connect({ port, host: '127.0.0.1' });
    open.on('error', () => {});
    await new Promise<void>((resolve) => open.once('connect', () => resolve()));
    open.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const outcome = await Promise.race([
      release().then(() => 'released'),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 5000).unref()),
    ]);
    open.destroy();
    expect(outcome).toBe('released');
    const again = await holdPort('admin.address', '127.0.0.1', port);
    await again();
  });
});
