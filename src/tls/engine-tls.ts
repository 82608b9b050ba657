/**
 * The TLS material of one config version, built with its engine so a reload swaps it whole:
 * new connections handshake with the new certificates, open ones keep theirs.
 *
 *   LoadedConfig ──► listeners with `tls: terminate` ──► ListenerTls (store + mTLS + server options)
 *                └─► UpstreamTls (cluster `tls:` contexts, CA paths relative to the config dir)
 */
import { ConfigError } from '../config/errors.ts';
import { type AddressBook, type ClusterPolicy, isBackendLister } from '../contracts/types.ts';
import type { IssuedCertificates } from './issued.ts';
import { type ListenerTls, loadListenerTls, type TerminatingListener } from './listener-tls.ts';
import { UpstreamTls } from './upstream.ts';

/** TLS state of one engine. */
export interface EngineTls {
  /** Terminating listeners by name. */
  readonly listeners: ReadonlyMap<string, ListenerTls>;
  readonly upstream: UpstreamTls;
  /** The runtime's issued certificates and pending ACME challenges (src/tls/issued.ts). */
  readonly issued: IssuedCertificates | undefined;
}

/** Loads every terminating listener's certificates; throws ConfigError naming each bad file. */
export async function buildEngineTls(
  configured: readonly (TerminatingListener & { readonly tls: string })[],
  dir: string,
  file: string,
  issued?: IssuedCertificates,
): Promise<EngineTls> {
  const errors: string[] = [];
  const listeners = new Map<string, ListenerTls>();
  for (const [i, l] of configured.entries()) {
    if (l.tls !== 'terminate') continue;
    const built = await loadListenerTls(l, dir, `listeners[${i}]`, errors, issued);
    if (built !== undefined) listeners.set(l.name, built);
  }
  if (errors.length > 0) throw new ConfigError(file, errors);
  return Object.freeze({ listeners, upstream: new UpstreamTls(dir), issued });
}

/** Builds the upstream contexts of every cluster the book lists; throws ConfigError on a bad CA. */
export function checkUpstreamTls(tls: EngineTls, book: AddressBook, file: string): void {
  if (!isBackendLister(book)) return;
  const clusters: { name: string; policy: ClusterPolicy }[] = [];
  // Named by config path where the book names the cluster (the bfe book's `clusters.<name>`).
  for (const e of book.listBackends()) {
    const name =
      e.cluster !== undefined ? `addressBook.clusters.${e.cluster}` : `addressBook (backend ${e.backend.id})`;
    clusters.push({ name, policy: e.policy });
  }
  const errors = tls.upstream.check(clusters);
  if (errors.length > 0) throw new ConfigError(file, [...new Set(errors)]);
}
