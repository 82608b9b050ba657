/**
 * What certificates a router serves, for `GET /certificates` and the certificate metrics: the
 * file certificates of every terminating listener (as reloaded from disk) and the ones obtained
 * by ACME, with the ACME manager's state per name (ordering, failures, next renewal).
 *
 *   switchboard_certificate_expiry_seconds{listener,name,source}  expiry, Unix seconds
 *   switchboard_acme_issuance_total{result}                       orders by result (ok, failed)
 *   switchboard_acme_storage_failures_total{op}                   failed storage probes and saves (probe, save)
 */
import { X509Certificate } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { channels } from '../../src/base/diagnostics.ts';
import type { AcmeManager, AcmeNameStatus } from '../acme/manager.ts';
import type { Runtime } from '../runtime/runtime.ts';

/** One served certificate. */
export interface CertificateInfo {
  readonly listener: string;
  readonly source: 'file' | 'acme';
  readonly names: readonly string[];
  readonly notAfter: string;
  readonly fingerprint: string;
}

/** Every certificate the current engine serves, files first. */
export function listCertificates(runtime: Runtime): CertificateInfo[] {
  const out: CertificateInfo[] = [];
  for (const [listener, tls] of runtime.engine.tls.listeners) {
    for (const c of tls.store.certificates) {
      const x = new X509Certificate(c.cert);
      out.push({
        listener,
        source: 'file',
        names: c.names,
        notAfter: new Date(x.validTo).toISOString(),
        fingerprint: x.fingerprint256,
      });
    }
  }
  for (const e of runtime.issued.entries()) {
    const x = new X509Certificate(e.cert);
    out.push({
      listener: e.listener,
      source: 'acme',
      names: [e.name],
      notAfter: new Date(e.notAfter).toISOString(),
      fingerprint: x.fingerprint256,
    });
  }
  return out;
}

/** The `GET /certificates` body. */
export function certificatesReport(
  runtime: Runtime,
  acme: AcmeManager | undefined,
): { certificates: CertificateInfo[]; acme: AcmeNameStatus[] } {
  return { certificates: listCertificates(runtime), acme: acme?.status() ?? [] };
}

/** Registers the certificate metrics; `on` subscribes to a diagnostics channel (unsubscribed by Metrics.close). */
export function registerCertificateMetrics(
  registry: Registry,
  runtime: Runtime,
  on: (channel: string, fn: (message: unknown) => void) => void,
): void {
  const registers = [registry];
  new Gauge({
    name: 'switchboard_certificate_expiry_seconds',
    help: 'Expiry of each served certificate (Unix time, seconds), by listener, name and source (file, acme)',
    labelNames: ['listener', 'name', 'source'],
    registers,
    collect() {
      this.reset();
      for (const c of listCertificates(runtime)) {
        for (const name of c.names)
          this.set({ listener: c.listener, name, source: c.source }, Date.parse(c.notAfter) / 1000);
      }
    },
  });
  const issued = new Counter({
    name: 'switchboard_acme_issuance_total',
    help: 'ACME orders (first issuance and renewals) by result: ok, failed',
    labelNames: ['result'],
    registers,
  });
  on(channels.acmeIssued.name as string, (m) => issued.inc({ result: (m as { result: string }).result }));
  const storage = new Counter({
    name: 'switchboard_acme_storage_failures_total',
    help: 'ACME storage failures by operation: probe (checked before an order; none is placed), save (an issued certificate served from memory, saved again later)',
    labelNames: ['op'],
    registers,
  });
  on(channels.acmeStorage.name as string, (m) => storage.inc({ op: (m as { op: string }).op }));
}
