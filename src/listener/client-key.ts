/**
 * What one client is for the per-client caps (`limits.maxConnectionsPerClient`,
 * `admin.maxConnectionsPerClient`): the key its connections are counted under.
 *
 * 1. IPv4 is the whole address. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a
 *    dual-stack socket reports for an IPv4 peer) is that IPv4 address (src/base/ip.ts rule 2).
 * 2. IPv6 is its first `limits.clientIpv6Prefix` bits (default 64), written as a CIDR
 *    (`2001:db8:1:2::/64`): one host is usually handed a whole /64 and can pick any address in
 *    it, so counting whole addresses would give it 2^64 budgets.
 * 3. Text that is not an address (a socket whose peer the kernel no longer knew: '') is its own
 *    key; the caller has decided already whether such a peer is counted.
 *
 * An IPv4 peer costs one `includes` call and no allocation: the key is the address string.
 */
import { formatIpBytes, parseIpInto } from '../base/ip.ts';

const scratch = new Uint8Array(16);

/** The per-client key of address `ip` with IPv6 aggregated to its first `ipv6Prefix` bits. */
export function clientKey(ip: string, ipv6Prefix: number): string {
  if (!ip.includes(':')) return ip;
  const family = parseIpInto(ip, scratch);
  if (family === 0) return ip;
  if (family === 4) return formatIpBytes(scratch, 4);
  if (ipv6Prefix >= 128) return formatIpBytes(scratch, 6);
  const whole = ipv6Prefix >> 3;
  const bits = ipv6Prefix & 7;
  if (bits > 0) scratch[whole] = (scratch[whole] ?? 0) & (0xff << (8 - bits));
  scratch.fill(0, bits > 0 ? whole + 1 : whole);
  return `${formatIpBytes(scratch, 6)}/${ipv6Prefix}`;
}
