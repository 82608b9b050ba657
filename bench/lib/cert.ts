/**
 * A self-signed P-256 certificate for the TLS backend, made with the `openssl` CLI into the
 * run's scratch folder (ECDSA keeps the backend's signing cost small, so the proxy's share of a
 * handshake shows).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Writes `tls.crt` / `tls.key` for `host` into `dir`; returns their paths. */
export async function selfSignedCert(dir: string, host: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '2',
    '-subj',
    `/CN=${host}`,
    '-addext',
    `subjectAltName=DNS:${host}`,
  ]);
  return { cert, key };
}
