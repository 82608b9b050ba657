/**
 * The outbound PROXY header (cluster `proxyProtocol: v1 | v2`): the first bytes of every new
 * upstream connection, naming this request's client. v2 carries AUTHORITY (SNI or Host) and
 * ALPN TLVs when known; mixed address families are mapped to one by the encoder.
 */
import { encodeProxyV1, encodeProxyV2 } from './proxy-protocol/index.ts';
import type { Request } from './types.ts';

/** The header for `request`, or undefined when the cluster sends none. */
export function proxyHeaderFor(mode: 'off' | 'v1' | 'v2', request: Request): Buffer | undefined {
  if (mode === 'off') return undefined;
  const source = { ip: request.clientIp, port: request.clientPort };
  // Behind an inbound PROXY header we relay the advertised destination (spec §3, as HAProxy does).
  const destination =
    request.vip !== undefined
      ? { ip: request.vip, port: request.vipPort ?? request.localPort }
      : { ip: request.localIp, port: request.localPort };
  if (source.ip === '' || destination.ip === '')
    return mode === 'v1' ? encodeProxyV1('unknown') : encodeProxyV2({ command: 'local' });
  if (mode === 'v1') return encodeProxyV1({ source, destination });
  const authority = request.sni ?? (request.host !== '' ? request.host : undefined);
  const alpn = request.alpn[0];
  return encodeProxyV2({
    command: 'proxy',
    source,
    destination,
    ...(authority !== undefined ? { authority } : {}),
    ...(alpn !== undefined ? { alpn } : {}),
  });
}
