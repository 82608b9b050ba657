/**
 * The routing decisions in the process log at `debug`, from the diagnostics channels every
 * panel already publishes on (src/base/diagnostics.ts):
 *
 *   switchboard:route:decided     ─► debug "route"          listener client host path product rule cluster
 *                                                            (result=no_route when nothing matched;
 *                                                            at trace also the sub-clusters)
 *   switchboard:upstream:attempt  ─► debug "route attempt"  the same, plus subcluster backend
 *                                                            attempt result (ok, connect_failed, …) error
 *
 * A request that reuses an idle upstream connection (per-request routing) has its "route" line
 * and no attempt line: nothing was dialled; its access line names the backend.
 *
 * Subscribed only while the logger's level is `debug` or more verbose (followed through pino's
 * `level-change`, so a reload or `configureLogger` switches it): at `info` the publishers see no
 * subscriber and the hot path pays one property read per decision and per try.
 *
 * Channels are per thread: a worker thread's runtime logs its own decisions (with `thread`).
 * Two routers in one process (tests) would log each other's decisions too.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { channels } from '../../src/base/diagnostics.ts';
import type { Logger } from '../../src/base/log.ts';
import type { Backend, Candidates, Request } from '../../src/contracts/types.ts';

interface Decided {
  readonly request: Request;
  readonly candidates: Candidates | undefined;
  readonly listener?: string;
}

interface Tried {
  readonly request: Request;
  readonly candidates: Candidates;
  readonly attempt: number;
  readonly result: string;
  readonly backend?: Backend;
  readonly subcluster?: string;
  readonly error?: string;
}

/** `ip:port` of the request's client, an IPv6 address in brackets (`[::1]:5000`). */
function clientOf(request: Request): string {
  const ip = request.clientIp;
  return ip.includes(':') ? `[${ip}]:${request.clientPort}` : `${ip}:${request.clientPort}`;
}

/** Logs routing decisions while the logger's level asks for them. */
export class RouteDebugLog {
  readonly #logger: Logger;
  /** The listener each routed request arrived on (the attempt message does not carry it). */
  readonly #listeners = new WeakMap<Request, string>();
  #on = false;
  readonly #onLevel = () => this.refresh();

  readonly #decided = (m: unknown): void => {
    try {
      const { request, candidates, listener } = m as Decided;
      if (listener !== undefined) this.#listeners.set(request, listener);
      // The client as routing saw it (a trusted PROXY or forwarded address when one was used).
      const where = { listener, client: clientOf(request), host: request.host, path: request.path };
      if (candidates === undefined) {
        this.#logger.debug({ ...where, result: 'no_route' }, 'route');
        return;
      }
      const { product, rule, cluster } = candidates;
      if (!this.#logger.isLevelEnabled('trace')) {
        this.#logger.debug({ ...where, product, rule, cluster }, 'route');
        return;
      }
      const subclusters = candidates.subclusters.map((s) => ({
        name: s.name,
        weight: s.weight,
        backends: s.backends.map((b) => b.id),
      }));
      this.#logger.trace({ ...where, product, rule, cluster, subclusters }, 'route');
    } catch {
      // A log line must never break the request (a throwing subscriber would be rethrown).
    }
  };

  readonly #tried = (m: unknown): void => {
    try {
      const t = m as Tried;
      const { product, rule, cluster } = t.candidates;
      this.#logger.debug(
        {
          listener: this.#listeners.get(t.request),
          client: clientOf(t.request),
          host: t.request.host,
          path: t.request.path,
          product,
          rule,
          cluster,
          subcluster: t.subcluster,
          backend: t.backend?.id,
          attempt: t.attempt,
          result: t.result,
          error: t.error,
        },
        'route attempt',
      );
    } catch {
      // As above.
    }
  };

  constructor(logger: Logger) {
    this.#logger = logger;
    logger.on('level-change', this.#onLevel);
    this.refresh();
  }

  /** Subscribes or unsubscribes to match the logger's level now. */
  refresh(): void {
    const want = this.#logger.isLevelEnabled('debug');
    if (want === this.#on) return;
    this.#on = want;
    const f = want ? subscribe : unsubscribe;
    f(channels.routeDecided.name, this.#decided);
    f(channels.upstreamAttempt.name, this.#tried);
  }

  close(): void {
    this.#logger.off('level-change', this.#onLevel);
    if (this.#on) {
      this.#on = false;
      unsubscribe(channels.routeDecided.name, this.#decided);
      unsubscribe(channels.upstreamAttempt.name, this.#tried);
    }
  }
}
