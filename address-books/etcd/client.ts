/**
 * The etcd connection options shared by the book and `switchboard etcd`: endpoints, a dial
 * timeout, and the watch reconnect backoff (exponential, capped). The backoff is written against
 * etcd3's `IBackoff` shape so no extra package is needed.
 */
import { Etcd3, type IOptions } from 'etcd3';

/** Reconnect backoff for the watch stream. */
export interface Backoff {
  readonly duration: number;
  next(): Backoff;
}

/** Exponential backoff from `initial` ms, doubling up to `max` ms. */
export function exponentialBackoff(initial: number, max: number, step = 0): Backoff {
  return { duration: Math.min(max, initial * 2 ** step), next: () => exponentialBackoff(initial, max, step + 1) };
}

/** Where etcd is and how to reconnect. */
export interface EtcdConnection {
  readonly endpoints: readonly string[];
  readonly dialTimeout: number;
  readonly reconnect: { readonly initial: number; readonly max: number };
}

/** A new etcd3 client for `c` (the caller closes it). */
export function connectEtcd(c: EtcdConnection): Etcd3 {
  const options: IOptions = {
    hosts: [...c.endpoints],
    dialTimeout: c.dialTimeout,
    faultHandling: { watchBackoff: exponentialBackoff(c.reconnect.initial, c.reconnect.max) },
  };
  return new Etcd3(options);
}
