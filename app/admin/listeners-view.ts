/**
 * The listeners as the dashboard shows them (`GET /ui/data` `listenerDetails`): each one's
 * configured and bound address, TLS mode, PROXY protocol, the certificates it serves (names,
 * expiry, source: a file of the config or ACME) and its connections (open now, ended since start).
 */
import { formatHostPort } from '../../src/config/address.ts';
import { listCertificates } from '../metrics/certificates.ts';
import type { AdminDeps } from './deps.ts';
import type { TrafficHistory } from './traffic.ts';

/** One listener for the page. */
export interface ListenerView {
  readonly name: string;
  readonly address: string;
  /** `host:port` it is bound to (port 0 resolved), when the panel reports it. */
  readonly bound: string | null;
  readonly tls: string;
  readonly proxyProtocol: string;
  readonly certificates: { names: readonly string[]; notAfter: string; source: 'file' | 'acme' }[];
  /** With `acme:`: the names it obtains certificates for. */
  readonly acme: readonly string[];
  readonly open: number;
  readonly total: number;
}

/** Every configured listener, in config order. */
export function listenersView(deps: AdminDeps, history: TrafficHistory): ListenerView[] {
  const { config } = deps.runtime.engine.loaded;
  const bound = deps.metrics.boundAddresses();
  const certs = listCertificates(deps.runtime);
  const totals = history.listenerTotals();
  const open = history.since(0).at(-1)?.listeners ?? {};
  return config.listeners.map((l) => {
    const b = bound[l.name];
    return {
      name: l.name,
      address: formatHostPort(l.address.host, l.address.port),
      bound: b === undefined ? null : formatHostPort(b.host, b.port),
      tls: l.tls,
      proxyProtocol: l.proxyProtocol,
      certificates: certs
        .filter((c) => c.listener === l.name)
        .map((c) => ({ names: c.names, notAfter: c.notAfter, source: c.source })),
      acme: l.acme?.names ?? [],
      open: open[l.name]?.open ?? 0,
      total: totals.get(l.name) ?? 0,
    };
  });
}
