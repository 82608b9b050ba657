/**
 * Pending challenge answers shared by the fleet (issue 43 item 2), so the CA's validation may
 * land on any router:
 *
 *   ordering router ─ challengeCreateFn ─► put <prefix>acme/challenges/http/<token>   (key authorization)
 *        │                                  put <prefix>acme/challenges/alpn/<name>   ({listener, cert, key sealed})
 *        │                                  (bound to its member lease: gone if it dies) ─► then its own sink
 *        └─ challengeRemoveFn ─► delete ─► its own sink
 *   every router ─ watch <prefix>acme/challenges/ ─► its sink: IssuedCertificates on every thread
 *                  (HTTP-01 answered before routing, TLS-ALPN-01 by acme-alpn.ts)
 *
 * A key authorization is no secret (it is served to anyone who asks for the token); the
 * TLS-ALPN-01 certificate's key is sealed like every other private key.
 */
import { InternalError } from '../../src/base/errors.ts';
import type { Logger } from '../../src/base/log.ts';
import type { IssuedUpdate } from '../../src/tls/issued.ts';
import type { Fleet, FleetChangeBatch } from '../fleet/contract.ts';
import type { KeySealer } from './fleet-crypto.ts';
import type { IssuedSink } from './order.ts';

/** The key prefix of pending challenges (watched by every router). */
export const CHALLENGES = 'acme/challenges/';

interface AlpnValue {
  readonly listener: string;
  readonly cert: string;
  readonly key: string;
}

/** Publishes this router's challenges to etcd and answers everyone's from the watch. */
export class FleetChallenges {
  readonly #fleet: Fleet;
  readonly #sealer: KeySealer | undefined;
  readonly #sink: IssuedSink;
  readonly #logger: Logger;
  readonly #listenersFor: (name: string) => string[];
  /** What the watch applied, by key under `acme/challenges/`: the update that withdraws it. */
  readonly #applied = new Map<string, IssuedUpdate[]>();

  constructor(o: {
    fleet: Fleet;
    sealer: KeySealer | undefined;
    sink: IssuedSink;
    logger: Logger;
    listenersFor: (name: string) => string[];
  }) {
    this.#fleet = o.fleet;
    this.#sealer = o.sealer;
    this.#sink = o.sink;
    this.#logger = o.logger;
    this.#listenersFor = o.listenersFor;
  }

  /** The sink an order publishes its challenges through: etcd first, then this router's own. */
  orderSink(): IssuedSink {
    return async (u) => {
      switch (u.kind) {
        case 'http-challenge':
          await this.#fleet.put(`${CHALLENGES}http/${u.token}`, u.keyAuthorization, { lease: 'member' });
          break;
        case 'tls-challenge': {
          const key = `${CHALLENGES}alpn/${u.name}`;
          // The storage probe refuses every order before this without a key.
          if (this.#sealer === undefined) throw new InternalError('acme: a tls-alpn-01 challenge without a fleet key');
          const sealed = this.#sealer.seal(u.key, key);
          const value: AlpnValue = { listener: u.listener, cert: u.cert, key: sealed };
          await this.#fleet.put(key, JSON.stringify(value), { lease: 'member' });
          break;
        }
        case 'http-challenge-done':
          await this.#withdraw(`${CHALLENGES}http/${u.token}`);
          break;
        case 'tls-challenge-done':
          await this.#withdraw(`${CHALLENGES}alpn/${u.name}`);
          break;
        default:
          break;
      }
      await this.#sink(u);
    };
  }

  /** Applies one batch of the `acme/challenges/` watch (keys relative to it). */
  apply(batch: FleetChangeBatch): void {
    if (batch.initial) {
      const present = new Set(batch.changes.map((c) => c.key));
      for (const key of [...this.#applied.keys()]) if (!present.has(key)) this.#remove(key);
    }
    for (const c of batch.changes) {
      if (c.kind === 'delete') this.#remove(c.key);
      else this.#add(c.key, c.value);
    }
  }

  #add(key: string, value: string): void {
    let adds: IssuedUpdate[];
    let removes: IssuedUpdate[];
    try {
      if (key.startsWith('http/')) {
        const token = key.slice('http/'.length);
        adds = [{ kind: 'http-challenge', token, keyAuthorization: value }];
        removes = [{ kind: 'http-challenge-done', token }];
      } else if (key.startsWith('alpn/')) {
        const name = key.slice('alpn/'.length);
        const v = JSON.parse(value) as AlpnValue;
        if (this.#sealer === undefined) return;
        const pem = this.#sealer.open(v.key, `${CHALLENGES}${key}`);
        const listeners = [...new Set([v.listener, ...this.#listenersFor(name)])];
        adds = listeners.map((listener) => ({ kind: 'tls-challenge', listener, name, cert: v.cert, key: pem }));
        removes = listeners.map((listener) => ({ kind: 'tls-challenge-done', listener, name }));
      } else return;
    } catch (e) {
      this.#logger.error(
        { key: `${CHALLENGES}${key}`, err: (e as Error).message },
        'acme: a fleet challenge not answered',
      );
      return;
    }
    this.#applied.set(key, removes);
    for (const u of adds) this.#publish(u);
  }

  #remove(key: string): void {
    const removes = this.#applied.get(key);
    if (removes === undefined) return;
    this.#applied.delete(key);
    for (const u of removes) this.#publish(u);
  }

  #publish(u: IssuedUpdate): void {
    this.#sink(u).catch((e: unknown) =>
      this.#logger.error({ kind: u.kind, err: (e as Error).message }, 'acme: publishing a fleet challenge'),
    );
  }

  /** A challenge done: its key goes (a failure is logged; the member lease removes it at the latest). */
  async #withdraw(key: string): Promise<void> {
    await this.#fleet
      .delete(key)
      .catch((e: unknown) =>
        this.#logger.warn(
          { key, err: (e as Error).message },
          'acme: a done challenge stays in etcd until its lease ends',
        ),
      );
  }
}
