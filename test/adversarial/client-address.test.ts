/**
 * The access log's `client` field (panels/net/client-address.ts): `ip:port` of a live peer, and
 * `unknown` (never `undefined:undefined`) once the peer's address is gone, as for a client that
 * reset before the accept ran (found by the nothing-lost checker, issue 13 §5).
 */
import { type AddressInfo, connect, createServer, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../panels/net/client-address.ts';

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
