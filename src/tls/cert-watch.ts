/**
 * Certificates renewed on disk are picked up without a config change: every `certificates[]`
 * entry of a terminating listener is watched (src/base/file-watch.ts: stat polling, so a rename-over
 * by certbot or cert-manager is seen as well as an in-place write). On a change the pair is read
 * and checked again; a good pair replaces that entry in the listener's store (new handshakes get
 * it, open connections keep theirs), a bad one (unreadable, not PEM, key not matching, or a
 * half-written pair) is logged and the old certificate keeps serving. A later write that
 * completes the pair is picked up on its own change.
 *
 * Each thread watches the files of its own engine (worker threads build their engines from the
 * same config), so every panel behaves the same; the watchers close with the engine.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { type FileWatcher, watchFiles } from '../base/file-watch.ts';
import type { Logger } from '../base/log.ts';
import type { ListenerConfig } from '../config/schema.ts';
import { loadCertificate } from './certificate-store.ts';
import type { EngineTls } from './engine-tls.ts';
import { configPath } from './files.ts';

/** How often certificate files are polled (stat), ms. */
export const CERT_WATCH_INTERVAL_MS = 500;
/** A pair written as two files settles within this (cert then key). */
const CERT_WATCH_DEBOUNCE_MS = 200;

/** SHA-256 of a PEM certificate's leaf (DER), hex: what logs and tests compare. */
export function fingerprintOf(pem: Buffer | string): string {
  return createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');
}

/** Watches every file certificate of `tls`'s terminating listeners; `close()` stops them all. */
export function watchCertificateFiles(
  listeners: readonly ListenerConfig[],
  tls: EngineTls,
  logger: Logger,
  intervalMs = CERT_WATCH_INTERVAL_MS,
): FileWatcher {
  const watchers: FileWatcher[] = [];
  listeners.forEach((l, li) => {
    const lt = tls.listeners.get(l.name);
    if (lt === undefined) return;
    l.certificates.forEach((spec, i) => {
      const where = `listeners[${li}].certificates[${i}]`;
      const paths = [configPath(lt.dir, spec.cert), configPath(lt.dir, spec.key)];
      const reload = async (): Promise<void> => {
        const errors: string[] = [];
        const loaded = await loadCertificate(spec, lt.dir, where, lt.clientCa, errors);
        if (loaded === undefined) {
          logger.error(
            { listener: l.name, cert: paths[0], errors },
            'certificate files changed but the new pair is not usable; the previous certificate keeps serving',
          );
          return;
        }
        const before = lt.store.certificates[i];
        if (before?.cert.equals(loaded.cert) && before.key.equals(loaded.key)) return;
        lt.store.replace(i, loaded);
        logger.info(
          { listener: l.name, cert: paths[0], names: loaded.names, fingerprint: fingerprintOf(loaded.cert) },
          'certificate reloaded from disk',
        );
      };
      watchers.push(
        watchFiles(
          paths,
          () => {
            reload().catch((e: unknown) =>
              logger.error({ listener: l.name, err: (e as Error).message }, 'certificate reload failed'),
            );
          },
          intervalMs,
          CERT_WATCH_DEBOUNCE_MS,
        ),
      );
    });
  });
  return {
    close() {
      for (const w of watchers) w.close();
    },
  };
}
