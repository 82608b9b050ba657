/**
 * Reload rules for one listener (used by the pipeline's `reconfigure`): whether a listener of
 * the new config is the socket already bound, and its precomputed PROXY trust check.
 */
import type { Server } from 'node:net';
import type { ListenerConfig } from '../config/schema.ts';
import { clientAddressing } from '../request/client-ip.ts';

/** Whether a socket peer may send a PROXY header on this listener (precomputed per listener). */
export function trustCheck(l: ListenerConfig): ((ip: string) => boolean) | undefined {
  return l.proxyProtocol === 'off' ? undefined : clientAddressing(l).trusted;
}

/**
 * Whether `l` asks for the socket `server` (bound for `was`) already has: same name and
 * address. A listener configured with port 0 is the same socket as a config naming the port it
 * was given: rebinding it would reset the connections waiting in its accept queue.
 */
export function sameSocket(was: ListenerConfig, server: Server, l: ListenerConfig): boolean {
  if (was.name !== l.name || was.address.host !== l.address.host) return false;
  if (was.address.port === l.address.port) return true;
  const a = server.address();
  return was.address.port === 0 && a !== null && typeof a === 'object' && a.port === l.address.port;
}
