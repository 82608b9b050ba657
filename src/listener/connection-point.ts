/**
 * The `connection` and `handshake` policy points' contexts (issue 42, BFE HandleAccept and
 * HandleHandshake): what is known of a connection after PROXY in and before TLS or any byte
 * peeked, read from the pipeline's `Connection`, and on a terminating listener what the
 * handshake added (SNI, ALPN, client certificate). Made only when some rule runs at the point.
 *
 * The client is the PROXY source when a header named one, else the socket peer (a forwarded
 * header is not read yet: no byte of the stream has been peeked); `secure` says whether the
 * listener terminates TLS; `vip` is the PROXY destination.
 */
import type { ConnectionContext, ConnectionFacts, HandshakeContext, HandshakeFacts } from '../contracts/policy.ts';
import type { TlsInfo } from '../contracts/types.ts';
import { type TlsFacts, tlsFactsOf } from '../tls/facts.ts';
import type { Connection } from './connection.ts';

/** The facts of one accepted connection (one object; the local address read once, on demand). */
class AcceptedFacts implements ConnectionFacts {
  readonly #c: Connection;
  constructor(c: Connection) {
    this.#c = c;
  }
  get #source(): { ip: string; port: number } | undefined {
    const proxy = this.#c.proxy;
    return proxy?.command === 'proxy' ? proxy.source : undefined;
  }
  get clientIp(): string {
    return this.#source?.ip ?? this.#c.ip;
  }
  get clientPort(): number {
    return this.#source?.port ?? this.#c.port;
  }
  get sessionIp(): string {
    return this.clientIp;
  }
  get peerIp(): string {
    return this.#c.ip;
  }
  get localIp(): string {
    return this.#c.raw.localAddress ?? '';
  }
  get localPort(): number {
    return this.#c.raw.localPort ?? 0;
  }
  get vip(): string | undefined {
    const proxy = this.#c.proxy;
    return proxy?.command === 'proxy' ? proxy.destination?.ip : undefined;
  }
  get secure(): boolean {
    return this.#c.listener.tls === 'terminate';
  }
  get trustedClient(): boolean {
    return this.#source !== undefined;
  }
  get listener(): string {
    return this.#c.listener.name;
  }
}

/** The facts of a terminated connection: those of accept plus the handshake's SNI, ALPN and client certificate. */
class TerminatedFacts extends AcceptedFacts implements HandshakeFacts {
  readonly #tls: TlsFacts | undefined;
  constructor(c: Connection) {
    super(c);
    this.#tls = tlsFactsOf(c.socket);
  }
  get sni(): string | undefined {
    return this.#tls?.sni;
  }
  get alpn(): readonly string[] {
    return this.#tls?.alpn ?? [];
  }
  get tls(): TlsInfo | undefined {
    return this.#tls?.tls;
  }
}

/** The context `PolicySet.connection` is asked with. */
export function connectionPoint(c: Connection): ConnectionContext {
  return { connection: new AcceptedFacts(c) };
}

/**
 * The context `PolicySet.handshake` is asked with on a terminating listener, once the handshake
 * is done (BFE HandleHandshake); a passthrough listener's is its ClientHello's request.
 */
export function handshakePoint(c: Connection): HandshakeContext {
  return { connection: new TerminatedFacts(c) };
}
