/**
 * A per-request connection that became a tunnel (a 101 to a request that offered that protocol
 * in `Upgrade`, or a 2xx to CONNECT): the client and the link's socket are spliced
 * (src/data-path/splice.ts) until either ends, and the exchange's record counts what crossed.
 */
import type { Socket } from 'node:net';
import { splice } from '../../src/data-path/splice.ts';
import type { Exchange } from './exchange.ts';
import type { UpstreamLink } from './upstream-link.ts';

/**
 * Splices `client` and `link`'s socket, `pending` (client bytes that came after the request)
 * first; at the end the exchange is finished with the splice's end and `ended` told it.
 */
export function spliceTunnel(
  client: Socket,
  link: UpstreamLink,
  pending: Buffer | undefined,
  idleTimeout: number,
  ex: Exchange,
  ended: (end: string, reason: string | undefined) => void,
): void {
  const read = client.bytesRead;
  const written = client.bytesWritten;
  splice(client, link.socket, pending, idleTimeout, (end, reason) => {
    ex.record.bytesIn += client.bytesRead - read + (pending?.length ?? 0);
    ex.record.bytesOut = link.bytesOut + client.bytesWritten - written;
    ex.finish(end, undefined, reason);
    ended(end, reason);
  });
}
