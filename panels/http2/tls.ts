/**
 * TLS for `http2` listeners with `tls: terminate`: the listener's `certificates` ([{cert, key}],
 * paths relative to the config file) loaded once; the first is the default, and SNI picks the
 * first certificate whose names match the requested server name (RFC 6125 via checkHost).
 */

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { ListenerConfig } from '../../src/config/schema.ts';
import { SwitchboardError } from '../../src/errors.ts';

/** One loaded certificate. */
interface Loaded {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly x509: X509Certificate;
  readonly context: SecureContext;
}

/** The options for http2.createSecureServer: default cert/key and an SNICallback. */
export interface TlsOptions {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly SNICallback: (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;
}

/** Loads the listener's certificates; throws SWB_ERR_CONFIG naming the listener and file. */
export function loadTls(listener: ListenerConfig, configDir: string): TlsOptions {
  const where = `listeners.${listener.name}.certificates`;
  if (listener.certificates.length === 0) {
    throw new SwitchboardError('SWB_ERR_CONFIG', `${where}: tls terminate needs at least one certificate`);
  }
  const loaded: Loaded[] = listener.certificates.map((c, i) => {
    try {
      const cert = readFileSync(resolve(configDir, c.cert));
      const key = readFileSync(resolve(configDir, c.key));
      return { cert, key, x509: new X509Certificate(cert), context: createSecureContext({ cert, key }) };
    } catch (e) {
      throw new SwitchboardError('SWB_ERR_CONFIG', `${where}[${i}]: ${(e as Error).message}`, { cause: e });
    }
  });
  const first = loaded[0]!;
  return {
    cert: first.cert,
    key: first.key,
    SNICallback(servername, cb) {
      const hit = loaded.find((l) => l.x509.checkHost(servername) !== undefined);
      cb(null, (hit ?? first).context);
    },
  };
}
