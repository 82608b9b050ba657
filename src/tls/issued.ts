/**
 * Certificates that come from outside the config files (ACME, app/acme/), and the ACME
 * challenges the router answers itself, for one runtime: it outlives engines, so a reload keeps
 * them, and every `CertificateStore` of a terminating listener consults it by SNI after its own
 * files (files win for the names they cover).
 *
 *   ACME manager (main thread) ──IssuedUpdate (plain data)──► IssuedCertificates.apply
 *                                        └── worker panel ──► each worker's IssuedCertificates
 *
 * Updates are plain data so they cross `postMessage` unchanged; contexts are built here, once
 * per update, never per connection.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { SwitchboardError } from '../base/errors.ts';
import type { Logger } from '../base/log.ts';
import { reasonOf } from './files.ts';

/** One change of the issued set; every field is plain data. */
export type IssuedUpdate =
  /** A certificate (PEM chain) and its key for `name` on `listener`; replaces the previous one. */
  | { readonly kind: 'certificate'; readonly listener: string; readonly name: string; cert: string; key: string }
  /** `name` is no longer managed on `listener` (dropped from `names:`, the routing table or the config): stop serving it. */
  | { readonly kind: 'certificate-withdrawn'; readonly listener: string; readonly name: string }
  /** The RFC 8737 challenge certificate served to ClientHellos offering `acme-tls/1` for `name`. */
  | { readonly kind: 'tls-challenge'; readonly listener: string; readonly name: string; cert: string; key: string }
  | { readonly kind: 'tls-challenge-done'; readonly listener: string; readonly name: string }
  /** HTTP-01: `GET /.well-known/acme-challenge/<token>` on a plaintext listener answers `keyAuthorization`. */
  | { readonly kind: 'http-challenge'; readonly token: string; readonly keyAuthorization: string }
  | { readonly kind: 'http-challenge-done'; readonly token: string };

/** One issued certificate as served. */
export interface IssuedEntry {
  readonly listener: string;
  readonly name: string;
  readonly cert: string;
  readonly key: string;
  readonly context: SecureContext;
  /** Expiry, ms since the epoch. */
  readonly notAfter: number;
  /** SHA-256 of the leaf (DER), hex. */
  readonly fingerprint: string;
}

/** The path prefix of HTTP-01 challenges (RFC 8555 §8.3). */
export const HTTP01_PREFIX = '/.well-known/acme-challenge/';

const MAX_MISSING_LOGGED = 1000;

/** What a per-listener map holds: keyed by listener name, then by server name. */
type ByListener<T> = Map<string, Map<string, T>>;

function inner<T>(m: ByListener<T>, listener: string): Map<string, T> {
  let byName = m.get(listener);
  if (byName === undefined) {
    byName = new Map();
    m.set(listener, byName);
  }
  return byName;
}

/** Issued certificates and pending challenges of one runtime. */
export class IssuedCertificates {
  readonly #certs: ByListener<IssuedEntry> = new Map();
  readonly #challenges: ByListener<{ cert: string; key: string; context: SecureContext }> = new Map();
  readonly #http = new Map<string, string>();
  readonly #missing = new Set<string>();
  #logger: Logger | undefined;

  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  set logger(logger: Logger) {
    this.#logger = logger;
  }

  /** Applies one update; a PEM pair that does not make a context throws an Error naming the name. */
  apply(u: IssuedUpdate): void {
    switch (u.kind) {
      case 'certificate': {
        const entry = buildEntry(u.listener, u.name, u.cert, u.key);
        inner(this.#certs, u.listener).set(u.name, entry);
        this.#missing.delete(`${u.listener}\0${u.name}`);
        return;
      }
      case 'certificate-withdrawn': {
        const byName = this.#certs.get(u.listener);
        byName?.delete(u.name);
        if (byName?.size === 0) this.#certs.delete(u.listener);
        return;
      }
      case 'tls-challenge': {
        const context = contextOf(u.name, u.cert, u.key);
        inner(this.#challenges, u.listener).set(u.name, { cert: u.cert, key: u.key, context });
        return;
      }
      case 'tls-challenge-done':
        this.#challenges.get(u.listener)?.delete(u.name);
        return;
      case 'http-challenge':
        this.#http.set(u.token, u.keyAuthorization);
        return;
      case 'http-challenge-done':
        this.#http.delete(u.token);
        return;
    }
  }

  /** The issued certificate for `name` on `listener`, if any. */
  certificate(listener: string, name: string): IssuedEntry | undefined {
    return this.#certs.get(listener)?.get(name);
  }

  /** Every issued certificate (admin, metrics). */
  entries(): IssuedEntry[] {
    const out: IssuedEntry[] = [];
    for (const byName of this.#certs.values()) out.push(...byName.values());
    return out;
  }

  /** True while a TLS-ALPN-01 challenge is pending on `listener` (the pipeline then peeks hellos). */
  hasChallenges(listener: string): boolean {
    const m = this.#challenges.get(listener);
    return m !== undefined && m.size > 0;
  }

  /** The challenge context for `name` on `listener`, while pending. */
  challenge(listener: string, name: string): SecureContext | undefined {
    return this.#challenges.get(listener)?.get(name)?.context;
  }

  /** The key authorization for an HTTP-01 request path, or undefined (route as usual). */
  httpAnswer(path: string | undefined): string | undefined {
    if (this.#http.size === 0 || path === undefined || !path.startsWith(HTTP01_PREFIX)) return undefined;
    return this.#http.get(path.slice(HTTP01_PREFIX.length));
  }

  /** The whole state as updates: what a worker thread that starts late is sent. */
  updates(): IssuedUpdate[] {
    const out: IssuedUpdate[] = [];
    for (const e of this.entries())
      out.push({ kind: 'certificate', listener: e.listener, name: e.name, cert: e.cert, key: e.key });
    for (const [listener, byName] of this.#challenges)
      for (const [name, c] of byName) out.push({ kind: 'tls-challenge', listener, name, cert: c.cert, key: c.key });
    for (const [token, keyAuthorization] of this.#http) out.push({ kind: 'http-challenge', token, keyAuthorization });
    return out;
  }

  /** A handshake for a name with no certificate at all: logged once per listener and name. */
  noteMissing(listener: string, name: string): void {
    const key = `${listener}\0${name}`;
    if (this.#missing.has(key) || this.#missing.size >= MAX_MISSING_LOGGED) return;
    this.#missing.add(key);
    this.#logger?.warn(
      { listener, name },
      'tls: no certificate for this name yet (default certificate or handshake failure)',
    );
  }
}

function contextOf(name: string, cert: string, key: string): SecureContext {
  try {
    return createSecureContext({ cert, key });
  } catch (e) {
    throw new SwitchboardError('SWB_ERR_CERTIFICATE', `certificate for ${name}: ${reasonOf(e)}`);
  }
}

function buildEntry(listener: string, name: string, cert: string, key: string): IssuedEntry {
  const context = contextOf(name, cert, key);
  const x509 = new X509Certificate(cert);
  return Object.freeze({
    listener,
    name,
    cert,
    key,
    context,
    notAfter: Date.parse(x509.validTo),
    fingerprint: createHash('sha256').update(x509.raw).digest('hex'),
  });
}
