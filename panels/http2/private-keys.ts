/**
 * Pool keys private to client connections, and which client connections hold them. With an
 * outbound PROXY header a pool key names the client (src/upstream/pool-key.ts), so its upstream
 * connections serve only that client connection; when the last client connection holding a key
 * closes, `release(key)` closes the key's pool at once instead of leaving its idle connections
 * open until `idleTimeout`.
 *
 *   hold(key, client) ─► key held by { client, … } ─► every holder closed ─► release(key)
 *
 * A key naming a forwarded client (`clientIpFrom: header`, port 0) can be shared by several
 * connections of that client: it is released when the last of them closes. One 'close' listener
 * per client connection, whatever the number of keys it holds.
 */
import type { Socket } from 'node:net';

export class PrivateKeys {
  readonly #release: (key: string) => void;
  /** Client connections holding each key. */
  readonly #holders = new Map<string, number>();
  /** Keys held by each client connection. */
  readonly #byClient = new WeakMap<Socket, Set<string>>();

  constructor(release: (key: string) => void) {
    this.#release = release;
  }

  /** Records that `client` uses the pool of `key`. */
  hold(key: string, client: Socket): void {
    // Its 'close' was emitted already (a retry after the client left): a listener added now
    // would never run, and the stream about to start is cancelled; the pool's idleTimeout closes
    // what it leaves.
    if (client.closed) return;
    let keys = this.#byClient.get(client);
    if (keys === undefined) {
      const mine = new Set<string>();
      keys = mine;
      this.#byClient.set(client, mine);
      client.once('close', () => this.#closed(mine));
    }
    if (keys.has(key)) return;
    keys.add(key);
    this.#holders.set(key, (this.#holders.get(key) ?? 0) + 1);
  }

  #closed(keys: Set<string>): void {
    for (const key of keys) {
      const n = (this.#holders.get(key) ?? 1) - 1;
      if (n > 0) {
        this.#holders.set(key, n);
        continue;
      }
      this.#holders.delete(key);
      this.#release(key);
    }
    keys.clear();
  }
}
