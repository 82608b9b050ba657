/**
 * The access log's `client` field (src/listener/client-address.ts): `ip:port` of a live peer, and
 * `unknown` (never `undefined:undefined`) once the peer's address is gone, as for a client that
 * reset before the accept ran (found by the nothing-lost checker, issue 13 §5). `readPeer`, the
 * listener pipeline's one read per connection, agrees with `remoteAddress` and keeps nothing
 * stale in its shared object after a read that failed.
 */
import { type AddressInfo, connect, createServer, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { clientAddress, clientText, readPeer } from '../../src/listener/client-address.ts';

/** Accepts one connection on port 0 and hands the server side to `use`, with the client's port. */
async function withAccepted<T>(use: (server: Socket, clientPort: number) => T): Promise<T> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.on('error', () => {});
  const [accepted] = await Promise.all([
    new Promise<Socket>((r) => server.once('connection', r)),
    new Promise<void>((r) => client.once('connect', () => r())),
  ]);
  try {
    return use(accepted, client.localPort ?? -1);
  } finally {
    accepted.destroy();
    client.destroy();
    await new Promise((r) => server.close(r));
  }
}

describe('clientAddress', () => {
  it('names a connected peer by ip:port', async () => {
    const [got, port] = await withAccepted((s, p) => [clientAddress(s), p] as const);
    expect(got).toBe(`127.0.0.1:${port}`);
  });

  it('says unknown for a socket whose peer address was never known (destroyed before it was read)', async () => {
    const got = await withAccepted((s) => {
      s.destroy();
      return clientAddress(s);
    });
    expect(got).toBe('unknown');
  });

  it('says unknown for a socket that never connected', () => {
    expect(clientAddress(new Socket())).toBe('unknown');
  });
});

describe('readPeer', () => {
  it('reads what remoteAddress reads, without leaving a copy on the socket', async () => {
    const [peer, port, kept] = await withAccepted((s, p) => {
      const r = readPeer(s);
      const got = { address: r.address, family: r.family, port: r.port };
      return [got, p, (s as unknown as { _peername?: unknown })._peername] as const;
    });
    expect(peer).toEqual({ address: '127.0.0.1', family: 'IPv4', port });
    expect(kept).toBeUndefined();
  });

  it("reports no address once the socket is gone, not the previous socket's", async () => {
    await withAccepted((s) => readPeer(s));
    const after = await withAccepted((s) => {
      s.destroy();
      const r = readPeer(s);
      return { address: r.address, port: r.port };
    });
    expect(after).toEqual({ address: undefined, port: undefined });
  });

  it('falls back to remoteAddress for a socket without a handle', () => {
    const r = readPeer(new Socket());
    expect(r.address).toBeUndefined();
    expect(r.port).toBeUndefined();
  });

  it('clientText names an unknown peer unknown', () => {
    expect(clientText('', 0)).toBe('unknown');
    expect(clientText('::1', 8080)).toBe('::1:8080');
  });
});
