/**
 * The key under which a pooled upstream connection may be reused by another request:
 *
 *   backend id [ | TLS: server name, CA file, verify ] [ | PROXY: mode, client, VIP ]
 *
 * A connection made for a cluster with `tls:` is never handed to a plaintext cluster on the
 * same backend (or the other way round). With an outbound PROXY header the connection names one
 * client connection and VIP, so it is private to it (HAProxy marks such connections private):
 * a stream of another client never travels under someone else's header.
 */

import type { ClusterPolicy, Request } from '../contracts/types.ts';
import type { UpstreamTlsOptions } from '../tls/upstream.ts';

/** The pool key of a connection to `backendId` for `request` under `policy` with `tls`. */
export function poolKey(
  backendId: string,
  policy: ClusterPolicy,
  request: Request,
  tls: UpstreamTlsOptions | undefined,
): string {
  let key = backendId;
  if (tls !== undefined) key += `|tls:${tls.servername ?? ''}|${policy.tls?.ca ?? ''}|${tls.rejectUnauthorized}`;
  if (policy.proxyProtocol !== 'off') {
    key += `|${policy.proxyProtocol}|${request.clientIp}:${request.clientPort}|${request.vip ?? ''}:${request.vipPort ?? ''}`;
  }
  return key;
}
