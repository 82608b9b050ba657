/**
 * The outbound PROXY header (cluster `proxyProtocol: v1 | v2`): the first bytes of every new
 * upstream connection, naming this request's client. v2 carries AUTHORITY (SNI or Host) and
 * ALPN TLVs when known; mixed address families are mapped to one by the encoder.
 *
 * AUTHORITY and ALPN come from the client, so the header may not be buildable: an AUTHORITY
 * longer than a host name can be (255 bytes; the schema lets a Host reach maxHeaderBytes, up to
 * 1 MiB) is refused with 431 `header_too_large` before anything is dialled, never sent without
 * it (a backend that reads AUTHORITY would silently apply its no-authority default) and never
 * thrown. An endpoint that is not an address refuses the request with 400 `bad_request`.
 *
 * The refusal is the upstream pipeline's failure with 0 attempts (`isUpstreamFailure`): every
 * opener hands it on as its outcome, the way a failed connect is.
 */
import type { Request } from '../contracts/types.ts';
import { isEncodeRefusal, tryEncodeProxyV1, tryEncodeProxyV2 } from '../proxy-protocol/index.ts';
import { isUpstreamFailure, type UpstreamFailure } from './attempts.ts';

/** True when `proxyHeaderFor` refused the request rather than giving header bytes (or none). */
export function isProxyOutRefused(x: Buffer | UpstreamFailure | undefined): x is UpstreamFailure {
  return isUpstreamFailure(x);
}

/**
 * The header for `request`, undefined when the cluster sends none, or the failure that refuses
 * the request before any backend is dialled when one of its values cannot be carried (never throws).
 */
export function proxyHeaderFor(mode: 'off' | 'v1' | 'v2', request: Request): Buffer | UpstreamFailure | undefined {
  if (mode === 'off') return undefined;
  const source = { ip: request.clientIp, port: request.clientPort };
  // Behind an inbound PROXY header we relay the advertised destination (spec §3, as HAProxy does).
  const destination =
    request.vip !== undefined
      ? { ip: request.vip, port: request.vipPort ?? request.localPort }
      : { ip: request.localIp, port: request.localPort };
  let out: Buffer | ReturnType<typeof tryEncodeProxyV2>;
  if (source.ip === '' || destination.ip === '')
    out = mode === 'v1' ? tryEncodeProxyV1('unknown') : tryEncodeProxyV2({ command: 'local' });
  else if (mode === 'v1') out = tryEncodeProxyV1({ source, destination });
  else {
    const authority = request.sni ?? (request.host !== '' ? request.host : undefined);
    const alpn = request.alpn[0];
    out = tryEncodeProxyV2({
      command: 'proxy',
      source,
      destination,
      ...(authority !== undefined ? { authority } : {}),
      ...(alpn !== undefined ? { alpn } : {}),
    });
  }
  if (!isEncodeRefusal(out)) return out;
  return {
    result: out.refused === 'too_long' ? 'header_too_large' : 'bad_request',
    attempts: 0,
    reason: `proxy protocol: ${out.reason}`,
  };
}
