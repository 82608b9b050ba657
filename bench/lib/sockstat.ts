/**
 * The host's TCP sockets in TIME_WAIT, from /proc/net/sockstat (Linux; undefined elsewhere).
 * A `newconn` round on loopback leaves two per connection (the client's toward the target and the
 * backend's toward the target's upstream side) for 60 s, so a run fills the ephemeral port range
 * toward each destination and each measurement starts in a state the ones before it left
 * (bench/README.md "TIME_WAIT").
 */
import { readFileSync } from 'node:fs';

/** The `tw` count of /proc/net/sockstat's TCP line. */
export function timeWaitSockets(file = '/proc/net/sockstat'): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^TCP:.*\btw (\d+)/m.exec(text);
  return m === null ? undefined : Number(m[1]);
}
