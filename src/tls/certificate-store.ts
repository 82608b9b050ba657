/**
 * A listener's certificates for `tls: terminate`, chosen by SNI.
 *
 *   1. At engine build every `{ cert, key, names? }` entry is read (paths relative to the config
 *      directory), parsed with X509Certificate and turned into one SecureContext: never per
 *      connection.
 *   2. Its names are the explicit `names:` list, else the certificate's DNS SANs, else its CN.
 *   3. On a handshake, `SNICallback` looks the server name up: exact, then one-label wildcard,
 *      then the default (the first certificate listed). No SNI → the default (the server's own
 *      context, which is the first certificate).
 *
 * With mutual TLS every context carries the client CA bundle: OpenSSL verifies the client chain
 * against the context the SNI callback switched to.
 */
import { X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { readPem, reasonOf } from './files.ts';
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
  readonly #table: NameTable<SecureContext>;
  readonly certificates: readonly LoadedCertificate[];

  constructor(certificates: readonly LoadedCertificate[]) {
    const first = certificates[0];
    if (first === undefined) throw new Error('certificate store: at least one certificate is required');
    this.certificates = certificates;
    this.#table = new NameTable(first.context);
    for (const c of certificates) for (const n of c.names) this.#table.add(n, c.context);
  }

  /** The default certificate (the first listed): served when there is no SNI or no match. */
  get default(): LoadedCertificate {
    return this.certificates[0]!;
  }

  /** The context for a server name: exact, wildcard, else the default. */
  contextFor(servername: string): SecureContext {
    return this.#table.lookup(servername);
  }

  /** For `tls.createServer({ SNICallback })`: synchronous lookup, no allocation. */
  readonly SNICallback = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    cb(null, this.#table.lookup(servername));
  };
}

/** Loads one certificate entry; pushes config errors under `where` and returns undefined on failure. */
async function loadOne(
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
): Promise<CertificateStore | undefined> {
  const before = errors.length;
  const loaded: LoadedCertificate[] = [];
  for (const [i, spec] of specs.entries()) {
    const one = await loadOne(spec, dir, `${where}[${i}]`, clientCa, errors);
    if (one !== undefined) loaded.push(one);
  }
  if (errors.length > before || loaded.length === 0) return undefined;
  return new CertificateStore(loaded);
}
