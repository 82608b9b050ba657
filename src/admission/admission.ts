/**
 * Admission: the connection caps of the listener pipeline (step 2 of README.md), counted once
 * per process. Three caps, all checked before a byte is read:
 *
 *   limits.maxConnections           every listener of the process together
 *   listeners[].maxConnections      one listener
 *   limits.maxConnectionsPerClient  one client (0 = unlimited): the key of client-key.ts (IPv6
 *                                   by limits.clientIpv6Prefix) of the socket peer, or, on a
 *                                   `proxyProtocol` listener, of the PROXY source: `admit` is
 *                                   then given no key and `client` takes the place once the
 *                                   header is read (the balancer's connection counts only
 *                                   against the global and listener caps meanwhile)
 *
 * Two implementations: `LocalAdmission` (one event loop: plain counters) and `SharedAdmission`
 * (shared-admission.ts: the worker panel's threads count in one SharedArrayBuffer).
 */
import type { Limits } from '../config/schema.ts';

/** Returned by `admit` when a cap is reached (nothing was counted). */
export const REFUSED = -1;

/** The caps of a process, shared by every panel and every thread of it. */
export interface Admission {
  /** The counter of listener `name`; resolve it once per bound listener (it survives reloads). */
  listener(name: string): number;
  /**
   * Counts one connection of client `key` on `listener` unless a cap is reached (no `key`: the
   * per-client cap is left to `client`). Returns REFUSED, or a handle that `release` takes back
   * exactly once when the connection ends.
   */
  admit(listener: number, key: string | undefined, limits: Limits, listenerCap: number | undefined): number;
  /**
   * Counts one connection of client `key` against limits.maxConnectionsPerClient (> 0) for a
   * connection admitted without a key. Returns REFUSED (nothing counted) or its handle for `release`.
   */
  client(key: string, limits: Limits): number;
  /** Gives back what `admit` (and `client`, with its handle) counted for `key`. */
  release(listener: number, key: string, handle: number): void;
  /** Connections counted now, all listeners together (tests, metrics). */
  readonly open: number;
}

/** Counters of one event loop. */
export class LocalAdmission implements Admission {
  #open = 0;
  readonly #names = new Map<string, number>();
  readonly #listeners: number[] = [];
  /** Open connections per peer, only while maxConnectionsPerClient > 0 (handle 1 = counted). */
  readonly #perClient = new Map<string, number>();

  listener(name: string): number {
    let i = this.#names.get(name);
    if (i === undefined) {
      i = this.#listeners.length;
      this.#names.set(name, i);
      this.#listeners.push(0);
    }
    return i;
  }

  admit(listener: number, key: string | undefined, limits: Limits, listenerCap: number | undefined): number {
    if (this.#open >= limits.maxConnections) return REFUSED;
    const inListener = this.#listeners[listener]!;
    if (listenerCap !== undefined && inListener >= listenerCap) return REFUSED;
    let handle = 0;
    if (key !== undefined && limits.maxConnectionsPerClient > 0) {
      handle = this.client(key, limits);
      if (handle === REFUSED) return REFUSED;
    }
    this.#open++;
    this.#listeners[listener] = inListener + 1;
    return handle;
  }

  client(key: string, limits: Limits): number {
    const n = this.#perClient.get(key) ?? 0;
    if (n >= limits.maxConnectionsPerClient) return REFUSED;
    this.#perClient.set(key, n + 1);
    return 1;
  }

  release(listener: number, ip: string, handle: number): void {
    this.#open--;
    this.#listeners[listener]!--;
    if (handle !== 1) return;
    const n = (this.#perClient.get(ip) ?? 1) - 1;
    if (n > 0) this.#perClient.set(ip, n);
    else this.#perClient.delete(ip);
  }

  get open(): number {
    return this.#open;
  }
}
