/**
 * Admission: the connection caps of the listener pipeline (step 2 of README.md), counted once
 * per process. Three caps, all checked before a byte is read:
 *
 *   limits.maxConnections           every listener of the process together
 *   listeners[].maxConnections      one listener
 *   limits.maxConnectionsPerClient  one socket peer address (0 = unlimited)
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
   * Counts one connection of peer `ip` on `listener` unless a cap is reached. Returns REFUSED,
   * or a handle that `release` takes back exactly once when the connection ends.
   */
  admit(listener: number, ip: string, limits: Limits, listenerCap: number | undefined): number;
  release(listener: number, ip: string, handle: number): void;
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

  admit(listener: number, ip: string, limits: Limits, listenerCap: number | undefined): number {
    if (this.#open >= limits.maxConnections) return REFUSED;
    const inListener = this.#listeners[listener]!;
    if (listenerCap !== undefined && inListener >= listenerCap) return REFUSED;
    let handle = 0;
    if (limits.maxConnectionsPerClient > 0) {
      const n = this.#perClient.get(ip) ?? 0;
      if (n >= limits.maxConnectionsPerClient) return REFUSED;
      this.#perClient.set(ip, n + 1);
      handle = 1;
    }
    this.#open++;
    this.#listeners[listener] = inListener + 1;
    return handle;
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
