/**
 * A listener's certificates for `tls: terminate`, chosen by SNI.
 *
 *   1. At engine build every `{ cert, key, names? }` entry is read (paths relative to the config
 *      directory), parsed with X509Certificate and turned into one SecureContext: never per
 *      connection.
 *   2. Its names are the explicit `names:` list, else the certificate's DNS SANs, else its CN.
 *   3. On a handshake, `SNICallback` looks the server name up: exact, then one-label wildcard,
 *      then an issued (ACME) certificate for the exact name (src/tls/issued.ts: files win for
 *      the names they cover), then the default (the first certificate listed; none on an
 *      ACME-only listener: the handshake fails, logged once per name). No SNI → the default.
 *   4. File watching (`cert-watch.ts`) swaps one entry with `replace`; `version` tells the
 *      Terminator to update the default of its tls.Server.
 *
 * With mutual TLS every context carries the client CA bundle: OpenSSL verifies the client chain
 * against the context the SNI callback switched to.
 */
import { X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { InternalError } from '../base/errors.ts';
import { readPem, reasonOf } from './files.ts';
import type { IssuedCertificates, IssuedEntry } from './issued.ts';
import { certificateNames, NameTable } from './names.ts';

/** One `certificates:` entry as configured. */
export interface CertificateSpec {
  readonly cert: string;
  readonly key: string;
  readonly names?: readonly string[] | undefined;
}

/** One loaded certificate with its names and its prebuilt context. */
export interface LoadedCertificate {
  readonly names: readonly string[];
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly context: SecureContext;
}

/** The certificates of one listener, looked up by server name. */
export class CertificateStore {
  #table: NameTable<SecureContext | undefined>;
  #certificates: LoadedCertificate[];
  readonly #listener: string;
  readonly #issued: IssuedCertificates | undefined;
  readonly #clientCa: Buffer | undefined;
  /** Issued contexts rebuilt with the client CA (mutual TLS), per entry. */
  readonly #withCa = new WeakMap<IssuedEntry, SecureContext>();
  /** Bumped when a file certificate is replaced (the Terminator then updates its default). */
  version = 0;

  constructor(
    certificates: readonly LoadedCertificate[],
    listener = '',
    issued?: IssuedCertificates,
    clientCa?: Buffer,
  ) {
    if (certificates.length === 0 && issued === undefined)
      throw new InternalError('certificate store: at least one certificate is required');
    this.#certificates = [...certificates];
    this.#listener = listener;
    this.#issued = issued;
    this.#clientCa = clientCa;
    this.#table = this.#build();
  }

  #build(): NameTable<SecureContext | undefined> {
    const table = new NameTable<SecureContext | undefined>(this.#certificates[0]?.context);
    for (const c of this.#certificates) for (const n of c.names) table.add(n, c.context);
    return table;
  }

  /** The file certificates, in config order. */
  get certificates(): readonly LoadedCertificate[] {
    return this.#certificates;
  }

  /** The default certificate (the first listed): served when there is no SNI or no match. */
  get default(): LoadedCertificate | undefined {
    return this.#certificates[0];
  }

  /** Swaps file certificate `index` for a freshly loaded one (file watching); new handshakes use it. */
  replace(index: number, loaded: LoadedCertificate): void {
    this.#certificates[index] = loaded;
    this.#table = this.#build();
    this.version++;
  }

  /** The context for a server name: file exact, file wildcard, issued (ACME), else the default. */
  contextFor(servername: string): SecureContext | undefined {
    const name = servername.toLowerCase();
    const own = this.#table.find(name);
    if (own !== undefined) return own;
    const issued = this.#issued?.certificate(this.#listener, name);
    if (issued !== undefined) return this.#issuedContext(issued);
    if (this.#table.fallback === undefined) this.#issued?.noteMissing(this.#listener, name);
    return this.#table.fallback;
  }

  #issuedContext(e: IssuedEntry): SecureContext {
    if (this.#clientCa === undefined) return e.context;
    let ctx = this.#withCa.get(e);
    if (ctx === undefined) {
      ctx = createSecureContext({ cert: e.cert, key: e.key, ca: this.#clientCa });
      this.#withCa.set(e, ctx);
    }
    return ctx;
  }

  /** For `tls.createServer({ SNICallback })`: synchronous lookup. */
  readonly SNICallback = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    cb(null, this.contextFor(servername));
  };
}

/** Loads one certificate entry; pushes config errors under `where` and returns undefined on failure. */
export async function loadCertificate(
  spec: CertificateSpec,
  dir: string,
  where: string,
  clientCa: Buffer | undefined,
  errors: string[],
): Promise<LoadedCertificate | undefined> {
  const cert = await readPem(dir, spec.cert, `${where}.cert`, errors);
  const key = await readPem(dir, spec.key, `${where}.key`, errors);
  if (cert === undefined || key === undefined) return undefined;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    errors.push(`${where}.cert: not a PEM certificate (${reasonOf(e)})`);
    return undefined;
  }
  let context: SecureContext;
  try {
    context = createSecureContext({ cert, key, ...(clientCa === undefined ? {} : { ca: clientCa }) });
  } catch (e) {
    errors.push(`${where}.key: cannot use with ${spec.cert}: ${reasonOf(e)}`);
    return undefined;
  }
  const names = spec.names !== undefined ? spec.names.map((n) => n.toLowerCase()) : certificateNames(x509);
  return { names, cert, key, context };
}

/** Loads every certificate of a listener; undefined (with errors pushed) when any failed. */
export async function loadCertificateStore(
  specs: readonly CertificateSpec[],
  dir: string,
  where: string,
  clientCa: Buffer | undefined,
  errors: string[],
  issued?: { readonly set: IssuedCertificates; readonly listener: string },
): Promise<CertificateStore | undefined> {
  const before = errors.length;
  const loaded: LoadedCertificate[] = [];
  for (const [i, spec] of specs.entries()) {
    const one = await loadCertificate(spec, dir, `${where}[${i}]`, clientCa, errors);
    if (one !== undefined) loaded.push(one);
  }
  if (errors.length > before || (loaded.length === 0 && issued === undefined)) return undefined;
  return new CertificateStore(loaded, issued?.listener, issued?.set, clientCa);
}
