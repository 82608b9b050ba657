/**
 * The `connection` policy point's context (issue 42, BFE HandleAccept): what is known of a
 * connection after PROXY in and before TLS or any byte peeked, read from the pipeline's
 * `Connection`. Made only when some rule runs at the point.
 *
 * The client is the PROXY source when a header named one, else the socket peer (a forwarded
 * header is not read yet: no byte of the stream has been peeked); `secure` says whether the
 * listener terminates TLS; `vip` is the PROXY destination.
 */
import type { ConnectionContext, ConnectionFacts } from '../contracts/policy.ts';
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

/** The context `PolicySet.connection` is asked with. */
export function connectionPoint(c: Connection): ConnectionContext {
  return { connection: new AcceptedFacts(c) };
}
