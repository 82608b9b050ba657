/**
 * TLS-ALPN-01 (RFC 8737) in the listener pipeline, part of step 4 on `tls: terminate` listeners
 * with an `acme:` section, only while a challenge is pending there (otherwise no byte is
 * peeked and the handshake starts at once):
 *
 *   raw ──► read the ClientHello (src/peek/tls-hello.ts) under the peek deadline ──► put it back
 *            │ ALPN offers `acme-tls/1` and the SNI has a pending challenge?
 *            ├─ yes ─► challenge handshake (only `acme-tls/1`, the challenge certificate with the
 *            │         critical acmeIdentifier extension) ─► close; never routed
 *            └─ no ──► the listener's normal Terminator
 *
 * The validation server only completes the handshake and reads the certificate; the router
 * closes right after. Nothing about the challenge lives here but the lookup: the ACME manager
 * (app/acme/) puts challenge certificates into the runtime's IssuedCertificates.
 */
import type { Socket } from 'node:net';
import type { SecureContext } from 'node:tls';
import { isSwitchboardError } from '../base/errors.ts';
import { type ClientHello, ClientHelloScanner } from '../peek/tls-hello.ts';
import type { IssuedCertificates } from '../tls/issued.ts';
import { Terminator } from './terminator.ts';

/** The ALPN protocol of TLS-ALPN-01 validation connections. */
export const ACME_TLS_ALPN = 'acme-tls/1';

/** Reads one ClientHello from `raw` and puts its bytes back; `done(undefined, reason)` on failure. */
export function peekHello(
  raw: Socket,
  timeoutMs: number,
  done: (hello: ClientHello | undefined, reason: string) => void,
): void {
  const scanner = new ClientHelloScanner();
  let buffer: Buffer | undefined;
  const settle = (): void => {
    clearTimeout(timer);
    raw.removeListener('data', onData);
    raw.removeListener('close', onClose);
    raw.pause();
  };
  const onData = (chunk: Buffer): void => {
    buffer = buffer === undefined ? chunk : Buffer.concat([buffer, chunk]);
    let hello: ClientHello | undefined;
    try {
      hello = scanner.feed(buffer);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      // Not a hello we can read: the TLS server will refuse it with its own alert.
      settle();
      raw.unshift(buffer);
      done(undefined, e.message);
      return;
    }
    if (hello === undefined) return;
    settle();
    raw.unshift(buffer);
    done(hello, '');
  };
  const onClose = (): void => {
    settle();
    done(undefined, 'client closed before the clienthello was complete');
  };
  const timer = setTimeout(
    () => {
      settle();
      done(undefined, `clienthello not complete within ${timeoutMs}ms`);
    },
    Math.max(1, timeoutMs),
  );
  raw.on('data', onData);
  raw.on('close', onClose);
  raw.resume();
}

/** True when `hello` is a TLS-ALPN-01 validation for a name with a pending challenge. */
export function isAcmeValidation(hello: ClientHello, issued: IssuedCertificates, listener: string): boolean {
  return (
    hello.sni !== undefined && hello.alpn.includes(ACME_TLS_ALPN) && issued.challenge(listener, hello.sni) !== undefined
  );
}

/** The Terminator that answers validation handshakes of `listener` with challenge certificates. */
export function challengeTerminator(issued: IssuedCertificates, listener: string, timeoutMs: number): Terminator {
  const SNICallback = (name: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    const ctx = issued.challenge(listener, name.toLowerCase());
    if (ctx === undefined) cb(new Error(`no pending tls-alpn-01 challenge for ${name}`));
    else cb(null, ctx);
  };
  return new Terminator({ serverOptions: { SNICallback } }, [ACME_TLS_ALPN], timeoutMs);
}
