/**
 * Which server names a certificate answers for, and how an SNI is matched against them:
 * exact name first, then a one-label wildcard (`*.example.test` matches `a.example.test`, not
 * `a.b.example.test`, as RFC 6125 §6.4.3 has it), then the listener's default certificate.
 */
import type { X509Certificate } from 'node:crypto';

/** DNS names from the certificate's subjectAltName, else its subject CN; lower-cased. */
export function certificateNames(x509: X509Certificate): string[] {
  const san = x509.subjectAltName;
  const dns: string[] = [];
  if (san !== undefined) {
    for (const entry of san.split(/,\s*/)) {
      if (entry.startsWith('DNS:')) dns.push(entry.slice(4).toLowerCase());
    }
  }
  if (dns.length > 0) return dns;
  for (const line of x509.subject.split('\n')) {
    if (line.startsWith('CN=')) return [line.slice(3).toLowerCase()];
  }
  return [];
}

/** A name → value table with exact and one-label wildcard entries, and a fallback. */
export class NameTable<T> {
  readonly #exact = new Map<string, T>();
  /** Keyed by the part after `*.`. */
  readonly #wildcard = new Map<string, T>();
  readonly fallback: T;

  constructor(fallback: T) {
    this.fallback = fallback;
  }

  /** Adds `name` (`host` or `*.suffix`); the first entry for a name wins. */
  add(name: string, value: T): void {
    const n = name.toLowerCase();
    const table = n.startsWith('*.') ? this.#wildcard : this.#exact;
    const key = n.startsWith('*.') ? n.slice(2) : n;
    if (!table.has(key)) table.set(key, value);
  }

  /** The value for a server name: exact, then wildcard, then the fallback. */
  lookup(servername: string): T {
    return this.find(servername) ?? this.fallback;
  }

  /** The value for a server name: exact, then wildcard; undefined without a match. */
  find(servername: string): T | undefined {
    const n = servername.toLowerCase();
    const exact = this.#exact.get(n);
    if (exact !== undefined) return exact;
    const dot = n.indexOf('.');
    if (dot > 0) {
      const wild = this.#wildcard.get(n.slice(dot + 1));
      if (wild !== undefined) return wild;
    }
    return undefined;
  }
}
