/**
 * The client address of a request (listener `clientIpFrom`), computed once per request from
 * what the connection proved and, on `header` listeners, what a trusted hop forwarded.
 *
 * 1. The connection address is the PROXY source when the listener took a PROXY header (command
 *    PROXY; the peer was already checked against `trustedSources`), else the socket peer. It is
 *    always the session address (`ses_sip_range`, per-client counting) and is never taken from
 *    a header.
 * 2. `clientIpFrom: connection` (the default): the client address is the connection address.
 * 3. `clientIpFrom: header`: only when the connection address lies in `trustedSources` is the
 *    configured header read; from anyone else it is ignored, so no client outside
 *    `trustedSources` can choose its own address.
 *    - `X-Forwarded-For`: every field line joined in order (RFC 9110 §5.3), split on commas,
 *      walked from the right. Entries inside `trustedSources` are our own proxies and are
 *      skipped; the first entry outside them is the client. We take the rightmost *untrusted*
 *      hop rather than the leftmost entry (which the client writes itself, so anyone can forge
 *      it) or blindly the last entry (which names our own proxy when there are two tiers of
 *      them). When every entry is trusted, the leftmost one is the client.
 *    - `X-Real-IP`: exactly one field line holding one address.
 *    - An entry that is not an IP address (`unknown`, an obfuscated id, garbage) ends the walk
 *      and the whole header is ignored: past a hop we cannot read, the chain proves nothing.
 *      `1.2.3.4:80` and `[2001:db8::1]:80` are accepted (some balancers append the port).
 * 4. A forwarded address has no port (clientPort 0) and sets `trustedClient`.
 */

import { type Cidr, canonicalIp, cidrContains, parseCidr } from '../base/ip.ts';
import type { ListenerConfig } from '../config/schema.ts';

/** How a listener finds the client address; precomputed once per listener config. */
export interface ClientAddressing {
  /** The lower-cased header to read on `clientIpFrom: header`; undefined on `connection`. */
  readonly header: 'x-forwarded-for' | 'x-real-ip' | undefined;
  /** True when an address lies in the listener's `trustedSources`. */
  readonly trusted: (ip: string) => boolean;
}

/** Header lookup of a request head: every value of a header, in wire order. */
export type HeaderValues = (lowerName: string) => readonly string[];

const cache = new WeakMap<object, ClientAddressing>();

/** The trust check of a list of CIDRs (unparsable entries are dropped: they trust nobody). */
export function trustedSourcesCheck(sources: readonly string[]): (ip: string) => boolean {
  const cidrs = sources.map((t) => parseCidr(t)).filter((c): c is Cidr => c !== undefined);
  return (ip) => {
    for (const c of cidrs) if (cidrContains(c, ip)) return true;
    return false;
  };
}

/** The addressing of a listener, built on first use and kept for the life of its config object. */
export function clientAddressing(
  listener: Pick<ListenerConfig, 'trustedSources'> & { clientIpFrom?: string; clientIpHeader?: string },
): ClientAddressing {
  let a = cache.get(listener);
  if (a !== undefined) return a;
  const header =
    listener.clientIpFrom === 'header'
      ? listener.clientIpHeader?.toLowerCase() === 'x-real-ip'
        ? 'x-real-ip'
        : 'x-forwarded-for'
      : undefined;
  a = Object.freeze({ header, trusted: trustedSourcesCheck(listener.trustedSources) });
  cache.set(listener, a);
  return a;
}

/** One forwarded entry as a canonical address, or undefined when it is not one. */
export function forwardedEntryIp(entry: string): string | undefined {
  let text = entry.trim();
  if (text.startsWith('[')) {
    // [v6] or [v6]:port
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const rest = text.slice(close + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    text = text.slice(1, close);
  } else {
    const colon = text.indexOf(':');
    // Exactly one colon after a dotted quad: IPv4 with a port.
    if (colon >= 0 && colon === text.lastIndexOf(':') && text.includes('.')) {
      if (!/^\d{1,5}$/.test(text.slice(colon + 1))) return undefined;
      text = text.slice(0, colon);
    }
  }
  return canonicalIp(text);
}

/** The client named by X-Forwarded-For values (rightmost untrusted hop), or undefined to ignore it. */
export function clientFromForwardedFor(
  values: readonly string[],
  trusted: (ip: string) => boolean,
): string | undefined {
  if (values.length === 0) return undefined;
  const entries = values.join(',').split(',');
  let leftmost: string | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const ip = forwardedEntryIp(entries[i]!);
    if (ip === undefined) return undefined;
    if (!trusted(ip)) return ip;
    leftmost = ip;
  }
  return leftmost;
}

/** The client named by X-Real-IP values (one line, one address), or undefined to ignore it. */
export function clientFromRealIp(values: readonly string[]): string | undefined {
  if (values.length !== 1) return undefined;
  return forwardedEntryIp(values[0]!);
}

/**
 * The forwarded client address for a request whose connection address is `connectionIp`, or
 * undefined when the listener does not read headers, the hop is not trusted, or the header is
 * absent or unreadable.
 */
export function forwardedClientIp(
  addressing: ClientAddressing,
  connectionIp: string,
  headerValues: HeaderValues,
): string | undefined {
  if (addressing.header === undefined || !addressing.trusted(connectionIp)) return undefined;
  const values = headerValues(addressing.header);
  return addressing.header === 'x-real-ip'
    ? clientFromRealIp(values)
    : clientFromForwardedFor(values, addressing.trusted);
}
