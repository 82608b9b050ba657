/**
 * What a `tls: terminate` listener needs to run handshakes: its certificate store, its mutual
 * TLS policy, and the options for the (never listening) `tls.Server` that performs them.
 */
import { createSecureContext, type TlsOptions } from 'node:tls';
import { type CertificateSpec, type CertificateStore, loadCertificateStore } from './certificate-store.ts';
import { readPem, reasonOf } from './files.ts';
import type { IssuedCertificates } from './issued.ts';

/** A listener's `clientAuth:` block. */
export interface ClientAuthSpec {
  readonly ca: string;
  readonly required: boolean;
}

/** The TLS side of one terminating listener, built once per engine. */
export interface ListenerTls {
  readonly listener: string;
  readonly store: CertificateStore;
  /** The config directory (relative certificate paths, file watching). */
  readonly dir: string;
  /** The runtime's issued certificates and challenges, on listeners with `acme:`. */
  readonly issued: IssuedCertificates | undefined;
  /** The client CA bundle (mutual TLS), for certificates reloaded from disk. */
  readonly clientCa: Buffer | undefined;
  /** Present when clients are asked for a certificate; `required` rejects those without a valid one. */
  readonly clientAuth: { readonly required: boolean } | undefined;
  /** Options for `tls.createServer` (the caller adds `handshakeTimeout` and `ALPNProtocols`). */
  readonly serverOptions: TlsOptions;
}

/** The listener keys this module reads. */
export interface TerminatingListener {
  readonly name: string;
  readonly certificates: readonly CertificateSpec[];
  readonly clientAuth?: ClientAuthSpec | undefined;
  /** Present when the router obtains certificates for this listener (ACME). */
  readonly acme?: object | undefined;
}

/** Reads and checks the client CA bundle; undefined with an error pushed on failure. */
async function loadClientCa(spec: ClientAuthSpec, dir: string, where: string, errors: string[]) {
  const ca = await readPem(dir, spec.ca, `${where}.ca`, errors);
  if (ca === undefined) return undefined;
  if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
    errors.push(`${where}.ca: no PEM certificate in ${spec.ca}`);
    return undefined;
  }
  try {
    createSecureContext({ ca });
  } catch (e) {
    errors.push(`${where}.ca: ${reasonOf(e)}`);
    return undefined;
  }
  return ca;
}

/** Loads a terminating listener's TLS material; undefined (errors pushed) on any failure. */
export async function loadListenerTls(
  l: TerminatingListener,
  dir: string,
  where: string,
  errors: string[],
  issued?: IssuedCertificates,
): Promise<ListenerTls | undefined> {
  const before = errors.length;
  const ca =
    l.clientAuth === undefined ? undefined : await loadClientCa(l.clientAuth, dir, `${where}.clientAuth`, errors);
  if (errors.length > before) return undefined;
  // Issued (ACME) certificates are looked up on every listener that has an `acme:` section.
  const set = l.acme !== undefined ? issued : undefined;
  const store = await loadCertificateStore(
    l.certificates,
    dir,
    `${where}.certificates`,
    ca,
    errors,
    set === undefined ? undefined : { set, listener: l.name },
  );
  if (store === undefined) return undefined;
  const first = store.default;
  const serverOptions: TlsOptions = {
    ...(first === undefined ? {} : { cert: first.cert, key: first.key }),
    ...(ca === undefined ? {} : { ca }),
    SNICallback: store.SNICallback,
    // ALPN is the panel's choice: the listener pipeline's Terminator adds it (src/listener/).
    requestCert: l.clientAuth !== undefined,
    rejectUnauthorized: l.clientAuth?.required ?? false,
  };
  return Object.freeze({
    listener: l.name,
    dir,
    issued: set,
    clientCa: ca,
    store,
    clientAuth: l.clientAuth === undefined ? undefined : Object.freeze({ required: l.clientAuth.required }),
    serverOptions,
  });
}
