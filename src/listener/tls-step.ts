/**
 * The listener pipeline's step 4 (README.md; pipeline.ts calls it): TLS termination of a
 * `tls: terminate` connection with its engine's certificates, one `Terminator` per listener
 * TLS config (kept while that config lives).
 *
 * While a TLS-ALPN-01 challenge is pending on the listener, the ClientHello is read first
 * (acme-alpn.ts): `acme-tls/1` for a pending name gets the challenge certificate and is closed,
 * never routed (`acme_challenge`); anything else is terminated as usual.
 */
import { LINGER_MS } from '../data-path/answer.ts';
import type { IssuedCertificates } from '../tls/issued.ts';
import type { ListenerTls } from '../tls/listener-tls.ts';
import { challengeTerminator, isAcmeValidation, peekHello } from './acme-alpn.ts';
import type { Connection } from './connection.ts';
import { Terminator } from './terminator.ts';

/** How the TLS step refuses a connection: the pipeline's own refusal (one access line, slot back). */
export interface TlsRefuser {
  refused(c: Connection, result: string, reason: string, protocol: string | undefined): void;
}

/** Step 4 of one pipeline (its panel's ALPN list). */
export class TlsStep {
  readonly #alpn: readonly string[];
  readonly #refuser: TlsRefuser;
  readonly #terminators = new WeakMap<ListenerTls, Terminator>();
  readonly #challengers = new WeakMap<ListenerTls, Terminator>();

  constructor(alpn: readonly string[], refuser: TlsRefuser) {
    this.#alpn = alpn;
    this.#refuser = refuser;
  }

  /** Terminates `c` with `tls` (its `secured` or `handshakeFailed` follows), or answers a pending challenge. */
  run(c: Connection, tls: ListenerTls): void {
    // TLS-ALPN-01 validations are told apart by their ClientHello, only while one is pending.
    if (tls.issued?.hasChallenges(c.listener.name)) this.#acmeOrTerminate(c, tls, tls.issued);
    else this.#terminate(c, tls);
  }

  #terminate(c: Connection, tls: ListenerTls): void {
    let t = this.#terminators.get(tls);
    if (t === undefined) {
      t = new Terminator(tls, this.#alpn, c.engine.limits.peekTimeout);
      this.#terminators.set(tls, t);
    }
    t.wrap(c.raw, c);
  }

  /** A ClientHello offering `acme-tls/1` for a pending name gets the challenge; never routed. */
  #acmeOrTerminate(c: Connection, tls: ListenerTls, issued: IssuedCertificates): void {
    const refuser = this.#refuser;
    peekHello(c.raw, c.remaining(), (hello, reason) => {
      if (c.raw.destroyed || c.raw.closed) refuser.refused(c, 'client_closed', reason, 'tls');
      else if (hello === undefined && reason.includes('not complete within'))
        refuser.refused(c, 'peek_timeout', reason, 'tls');
      else if (hello === undefined || !isAcmeValidation(hello, issued, c.listener.name)) this.#terminate(c, tls);
      else {
        let t = this.#challengers.get(tls);
        if (t === undefined) {
          t = challengeTerminator(issued, c.listener.name, c.engine.limits.peekTimeout);
          this.#challengers.set(tls, t);
        }
        t.wrap(c.raw, {
          secured: (s) => {
            s.once('close', () =>
              refuser.refused(c, 'acme_challenge', `tls-alpn-01 validation of ${hello.sni}`, 'tls'),
            );
            s.end();
            setTimeout(() => s.destroy(), LINGER_MS).unref();
          },
          handshakeFailed: (why) => refuser.refused(c, 'bad_request', `tls handshake: ${why}`, 'tls'),
        });
      }
    });
  }
}
