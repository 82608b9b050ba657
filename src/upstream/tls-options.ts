/**
 * The upstream TLS options of one connect, from the engine's `UpstreamTls` (src/tls/upstream.ts).
 * A CA file that cannot be loaded fails the attempt like a refused connect (the engine build
 * already checked it, so this only happens when the file changed under a running engine).
 */

import type { Candidates, Protocol } from '../contracts/types.ts';
import { DEFAULT_CLUSTER_TLS, type UpstreamTls, type UpstreamTlsOptions } from '../tls/upstream.ts';
import { ConnectError } from './connect.ts';

/**
 * TLS for a connect to `backendHost` under the cluster of `candidates`, speaking `protocol`
 * inside (ALPN); undefined = plain TCP. `required` asks for TLS even without a `tls:` key
 * (the http2 panel's `protocol: h2`), with the defaults: system roots, verified.
 */
export function tlsOptions(
  tls: UpstreamTls,
  candidates: Candidates,
  backendHost: string,
  protocol: Protocol,
  required = false,
): UpstreamTlsOptions | undefined {
  const clusterTls = candidates.policy.tls ?? (required ? DEFAULT_CLUSTER_TLS : undefined);
  if (clusterTls === undefined || protocol === 'tls') return undefined;
  try {
    return tls.optionsForTls(clusterTls, backendHost, protocol);
  } catch (e) {
    throw new ConnectError(`cluster ${candidates.cluster}: ${(e as Error).message}`, false);
  }
}
