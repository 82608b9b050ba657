/**
 * The TLS facts routing reads from a terminated client connection (Request `secure`, `sni`,
 * `alpn`, `tls.clientAuth`, `tls.clientCaNames`), computed once per connection and cached, so
 * per-request routing on a keep-alive connection does not walk the certificate chain again.
 */
import type { Socket } from 'node:net';
import { type DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { TlsInfo } from '../contracts/types.ts';

/** What a terminated connection adds to its requests. */
export interface TlsFacts {
  readonly sni: string | undefined;
  /** The negotiated protocol (a one-element list), or empty. */
  readonly alpn: readonly string[];
  readonly tls: TlsInfo;
}

const cache = new WeakMap<Socket, TlsFacts>();

/** Common names of the issuers along the verified client chain (leaf's issuer first). */
function issuerNames(socket: TLSSocket): string[] {
  const names: string[] = [];
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<DetailedPeerCertificate>();
  while (cert !== undefined && cert.issuer !== undefined && !seen.has(cert)) {
    seen.add(cert);
    const cn = cert.issuer.CN as string | string[] | undefined;
    for (const n of Array.isArray(cn) ? cn : cn === undefined ? [] : [cn]) if (!names.includes(n)) names.push(n);
    const next: DetailedPeerCertificate | undefined = cert.issuerCertificate;
    cert = next === cert ? undefined : next;
  }
  return names;
}

/** The facts of a server-side TLSSocket; undefined for plain sockets. */
export function tlsFactsOf(socket: Socket): TlsFacts | undefined {
  // Every TLSSocket sets `encrypted`; a plain socket is told apart by that one property read
  // (issue 18: `instanceof` walked the prototype chain of every plain connection, ~1 µs in situ).
  if ((socket as { encrypted?: boolean }).encrypted !== true || !(socket instanceof TLSSocket)) return undefined;
  let facts = cache.get(socket);
  if (facts !== undefined) return facts;
  const servername = (socket as TLSSocket & { servername?: string | false | null }).servername;
  const alpn = socket.alpnProtocol;
  const clientAuth = socket.authorized === true;
  facts = Object.freeze({
    sni: typeof servername === 'string' && servername !== '' ? servername.toLowerCase() : undefined,
    alpn: Object.freeze(typeof alpn === 'string' ? [alpn] : []),
    tls: Object.freeze({
      clientAuth,
      clientCaNames: Object.freeze(clientAuth ? issuerNames(socket) : []),
      // For the access line's tls_version (once per connection, like the rest).
      version: socket.getProtocol() ?? undefined,
    }),
  });
  cache.set(socket, facts);
  return facts;
}
