/**
 * Sniffing the first bytes of a connection (after any PROXY header): one decision per
 * connection, made by the first detector that can tell.
 *
 *   0x16 ............................ TLS ClientHello → sni, alpn
 *   "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" ... h2c → first HEADERS (HPACK) → :authority, :path
 *   anything else ..................... HTTP/1 request head (llhttp + our strict rules)
 *
 * A `Sniffer` lives for one connection's peek so the incremental scanners (one per protocol)
 * keep their offsets: bytes already scanned are not scanned again on the next read. A
 * `tls: passthrough` listener refuses anything but TLS; an `h2c: refuse` one refuses the h2c
 * preface (GOAWAY HTTP_1_1_REQUIRED) before reading a frame, and an `h2c: route` one stops at
 * the complete 24-byte preface (`h2c-preface`): the panel hands the connection to an engine
 * that routes every stream, and nothing after the preface is read here.
 */
import { peerError } from '../base/errors.ts';
import {
  H2_ERROR,
  H2_PREFACE,
  type H2cControl,
  type H2cHead,
  H2cScanner,
  H2PeekError,
  looksLikeH2c,
  startsLikeH2c,
} from './h2c.ts';
import { DEFAULT_MAX_HEADER_COUNT, type Http1Head, Http1HeadScanner } from './http1.ts';
import { DEFAULT_PATH_NORMALIZATION, type PathNormalization } from './path.ts';
import { type ClientHello, ClientHelloScanner, looksLikeTls } from './tls-hello.ts';

export type Sniffed =
  | { readonly kind: 'http1'; readonly head: Http1Head }
  | { readonly kind: 'h2c'; readonly head: H2cHead }
  | { readonly kind: 'tls'; readonly hello: ClientHello }
  /** `h2c: route`: the whole client preface and nothing decided from the frames after it. */
  | { readonly kind: 'h2c-preface' };

/** The protocol the bytes look like (an `h2c-preface` is `h2c`). */
export type SniffedKind = 'http1' | 'h2c' | 'tls';

/** What a listener lets through: `off` = HTTP (TLS still passed through), `passthrough` = TLS only. */
export type TlsMode = 'off' | 'passthrough' | 'terminate';

/**
 * Whether a listener takes HTTP/2 with prior knowledge in cleartext (listeners[].h2c): `allow`
 * peeks up to the first HEADERS, `route` up to the end of the preface, `refuse` throws.
 */
export type H2cMode = 'allow' | 'refuse' | 'route';

const PREFACE_ONLY: Sniffed = Object.freeze({ kind: 'h2c-preface' });

export class Sniffer {
  readonly #maxHeaderBytes: number;
  readonly #tls: TlsMode;
  readonly #h2cMode: H2cMode;
  readonly #paths: PathNormalization;
  readonly #maxHeaderCount: number;
  #http1: Http1HeadScanner | undefined;
  #hello: ClientHelloScanner | undefined;
  #h2c: H2cScanner | undefined;
  /** The protocol the bytes looked like, once known (for choosing how to answer errors). */
  kind: SniffedKind | undefined;
  /** h2c (`allow`): told of the prelude's SETTINGS and PINGs to answer (src/peek/h2c.ts). */
  h2cControl: H2cControl | undefined;

  /**
   * h2c: where the client's first SETTINGS frame ends, once the preface and that frame are
   * complete and valid (the server may send its own SETTINGS from then on, RFC 9113 §3.4).
   */
  get h2cSettingsEnd(): number | undefined {
    return this.#h2c?.settingsEnd;
  }

  /**
   * `paths`: the listener's `pathNormalization` for HTTP/1 targets (src/peek/path.ts);
   * `maxHeaderCount`: an HTTP/1 head with more field lines is refused (431), an h2c first
   * request with more fields gets a GOAWAY (`header_too_large`).
   */
  constructor(
    maxHeaderBytes: number,
    tls: TlsMode,
    h2c: H2cMode = 'allow',
    paths: PathNormalization = DEFAULT_PATH_NORMALIZATION,
    maxHeaderCount = DEFAULT_MAX_HEADER_COUNT,
  ) {
    this.#maxHeaderBytes = maxHeaderBytes;
    this.#maxHeaderCount = maxHeaderCount;
    this.#tls = tls;
    this.#h2cMode = h2c;
    this.#paths = paths;
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
      if (this.kind === 'h2c' && this.#h2cMode === 'refuse') {
        // Refused at the preface, before any frame is read: nothing of it is routed or forwarded.
        throw new H2PeekError(
          H2_ERROR.HTTP_1_1_REQUIRED,
          'h2c: prior-knowledge HTTP/2 is refused on this listener (h2c: refuse)',
        );
      }
    }
    switch (this.kind) {
      case 'tls': {
        this.#hello ??= new ClientHelloScanner(this.#maxHeaderBytes);
        const hello = this.#hello.feed(buf);
        return hello === undefined ? undefined : { kind: 'tls', hello };
      }
      case 'h2c': {
        if (this.#h2cMode === 'route') return preface(buf);
        if (this.#h2c === undefined) {
          this.#h2c = new H2cScanner(this.#maxHeaderBytes, this.#maxHeaderCount);
          this.#h2c.onControl = this.h2cControl;
        }
        const head = this.#h2c.feed(buf);
        return head === undefined ? undefined : { kind: 'h2c', head };
      }
      default: {
        this.#http1 ??= new Http1HeadScanner(
          this.#maxHeaderBytes,
          this.#paths,
          this.#maxHeaderCount,
          // Cleartext only: h2c inside terminated TLS is not HTTP/2 the engine takes (ALPN decides).
          this.#h2cMode === 'route' && this.#tls !== 'terminate',
        );
        const head = this.#http1.feed(buf);
        return head === undefined ? undefined : { kind: 'http1', head };
      }
    }
  }
}

/** `h2c: route`: the preface once all 24 bytes are in; a divergence after its request line is refused. */
function preface(buf: Buffer): Sniffed | undefined {
  const whole = looksLikeH2c(buf);
  if (whole === undefined) return undefined;
  if (whole) return PREFACE_ONLY;
  const at = buf.findIndex((b, i) => b !== H2_PREFACE[i]);
  throw new H2PeekError(H2_ERROR.PROTOCOL_ERROR, `h2c: bad connection preface at byte ${at}`);
}
