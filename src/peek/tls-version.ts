/**
 * The TLS version a passed-through ClientHello offers, named as Node names an agreed one
 * (`TLSSocket.getProtocol()`: `TLSv1.3`, `TLSv1.2`, …), for the access line's `tls_version`
 * on a `tls: passthrough` listener. The router never sees the ServerHello of a passed-through
 * connection, so this is the highest version the client offers (`supported_versions`, RFC 8446
 * §4.2.1, GREASE values skipped; else the legacy version), not the one the backend picks.
 */
import type { HelloFields } from './tls-extensions.ts';

const NAMES: ReadonlyMap<number, string> = new Map([
  [0x0304, 'TLSv1.3'],
  [0x0303, 'TLSv1.2'],
  [0x0302, 'TLSv1.1'],
  [0x0301, 'TLSv1'],
  [0x0300, 'SSLv3'],
]);

/** The highest known version `hello` offers, by name; undefined when it offers none we know. */
export function offeredTlsVersion(hello: Pick<HelloFields, 'legacyVersion' | 'supportedVersions'>): string | undefined {
  let best = 0;
  for (const v of hello.supportedVersions) if (NAMES.has(v) && v > best) best = v;
  if (best === 0) best = hello.legacyVersion;
  return NAMES.get(best);
}
