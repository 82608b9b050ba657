/**
 * A TCP relay on port 0 in front of a backend that records every byte the router sends through
 * it, per connection: what crossed the wire, to assert that nothing went in clear.
 */
import { type AddressInfo, createServer, connect as netConnect, type Socket } from 'node:net';

export interface RecordingRelay {
  readonly port: number;
  readonly address: string;
  /** Bytes received from the router, one array per connection, in order. */
  readonly received: Buffer[][];
  close(): Promise<void>;
}

/** Starts a relay to 127.0.0.1:`targetPort`. */
export async function startRecordingRelay(targetPort: number): Promise<RecordingRelay> {
  const received: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const chunks: Buffer[] = [];
    received.push(chunks);
    const upstream = netConnect({ port: targetPort, host: '127.0.0.1' });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (c: Buffer) => chunks.push(c));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    address: `127.0.0.1:${port}`,
    received,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
