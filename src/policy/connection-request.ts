/**
 * The `Request` a condition reads at the `connection` and `handshake` points, where no request
 * head exists yet: the connection's facts, and an empty head (no host, path, method, headers,
 * cookies or query). The compile step refuses a rule whose `when:` reads the head at those
 * points (points.ts), so the empty fields are never what decides a rule.
 */
import type { ConnectionFacts, HandshakeFacts } from '../contracts/policy.ts';
import type { ClientFrom, Protocol, Request, TlsInfo } from '../contracts/types.ts';

const NO_VALUES: readonly string[] = Object.freeze([]);

/** A head-less request over a connection's facts (one object, methods on the prototype). */
export class ConnectionRequest implements Request {
  readonly #facts: ConnectionFacts & Partial<Pick<HandshakeFacts, 'sni' | 'alpn' | 'tls'>>;
  readonly host = '';
  readonly port = undefined;
  readonly path = undefined;
  readonly target = undefined;
  readonly query = '';
  readonly method = undefined;
  constructor(facts: ConnectionFacts & Partial<Pick<HandshakeFacts, 'sni' | 'alpn' | 'tls'>>) {
    this.#facts = facts;
  }
  get protocol(): Protocol {
    return this.#facts.secure ? 'tls' : 'http1';
  }
  header(): string | undefined {
    return undefined;
  }
  headerValues(): readonly string[] {
    return NO_VALUES;
  }
  cookie(): string | undefined {
    return undefined;
  }
  queryParam(): string | undefined {
    return undefined;
  }
  get sni(): string | undefined {
    return this.#facts.sni;
  }
  get alpn(): readonly string[] {
    return this.#facts.alpn ?? NO_VALUES;
  }
  get tls(): TlsInfo | undefined {
    return this.#facts.tls;
  }
  get clientIp(): string {
    return this.#facts.clientIp;
  }
  get clientPort(): number {
    return this.#facts.clientPort;
  }
  get peerIp(): string {
    return this.#facts.peerIp;
  }
  get sessionIp(): string {
    return this.#facts.sessionIp ?? this.#facts.clientIp;
  }
  get localIp(): string {
    return this.#facts.localIp;
  }
  get localPort(): number {
    return this.#facts.localPort;
  }
  get vip(): string | undefined {
    return this.#facts.vip;
  }
  get secure(): boolean {
    return this.#facts.secure;
  }
  get trustedClient(): boolean {
    return this.#facts.trustedClient;
  }
  /** Before a head no forwarded header has been read: a trusted client address is a PROXY source's. */
  get clientFrom(): ClientFrom {
    return this.#facts.trustedClient ? 'proxy' : 'connection';
  }
  get listener(): string {
    return this.#facts.listener;
  }
}
