/**
 * Sniffing the first bytes of a connection (after any PROXY header): one decision per
 * connection, made by the first detector that can tell.
 *
 *   0x16 ............................ TLS ClientHello → sni, alpn
 *   "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" ... h2c → first HEADERS (HPACK) → :authority, :path
 *                                      (from "PRI * HTTP/2.0" on: no HTTP/1 request has
 *                                      version 2.0, so a wrong rest is a bad preface → GOAWAY)
 *   anything else ..................... HTTP/1 request head (llhttp + our strict rules)
 *
 * A `Sniffer` lives for one connection's peek so incremental scanners keep their offsets.
 */
import { peerError } from '../errors.ts';
import { clientSettingsEnd, type H2cHead, peekH2c, startsLikeH2c } from './h2c.ts';
import { type Http1Head, Http1HeadScanner } from './http1.ts';
import { type ClientHello, looksLikeTls, peekClientHello } from './tls-hello.ts';

export type Sniffed =
  | { readonly kind: 'http1'; readonly head: Http1Head }
  | { readonly kind: 'h2c'; readonly head: H2cHead }
  | { readonly kind: 'tls'; readonly hello: ClientHello };

export type SniffedKind = Sniffed['kind'];

/** What a listener lets through: `off` = HTTP (TLS still passed through), `passthrough` = TLS only. */
export type TlsMode = 'off' | 'passthrough' | 'terminate';

export class Sniffer {
  readonly #maxHeaderBytes: number;
  readonly #tls: TlsMode;
  #http1: Http1HeadScanner | undefined;
  /** The protocol the bytes looked like, once known (for choosing how to answer errors). */
  kind: SniffedKind | undefined;
  /**
   * h2c: where the client's first SETTINGS frame ends, once the preface and that frame are
   * complete and valid (the server may send its own SETTINGS from then on, RFC 9113 §3.4).
   */
  h2cSettingsEnd: number | undefined;

  constructor(maxHeaderBytes: number, tls: TlsMode) {
    this.#maxHeaderBytes = maxHeaderBytes;
    this.#tls = tls;
  }

  /** Decides on `buf` (every byte after the PROXY header); undefined = need more bytes. */
  decide(buf: Buffer): Sniffed | undefined {
    if (this.kind === undefined) {
      if (looksLikeTls(buf[0]!)) this.kind = 'tls';
      else {
        const h2 = startsLikeH2c(buf);
        if (h2 === undefined) return undefined;
        this.kind = h2 ? 'h2c' : 'http1';
      }
      if (this.#tls === 'passthrough' && this.kind !== 'tls') {
        throw peerError('bad_request', `${this.kind}: this listener accepts TLS only (tls: passthrough)`);
      }
    }
    switch (this.kind) {
      case 'tls': {
        const hello = peekClientHello(buf, this.#maxHeaderBytes);
        return hello === undefined ? undefined : { kind: 'tls', hello };
      }
      case 'h2c': {
        this.h2cSettingsEnd ??= clientSettingsEnd(buf, this.#maxHeaderBytes);
        const head = peekH2c(buf, this.#maxHeaderBytes);
        return head === undefined ? undefined : { kind: 'h2c', head };
      }
      default: {
        this.#http1 ??= new Http1HeadScanner(this.#maxHeaderBytes);
        const head = this.#http1.feed(buf);
        return head === undefined ? undefined : { kind: 'http1', head };
      }
    }
  }
}
