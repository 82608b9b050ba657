/**
 * One new connection to a backend, the only place one is made (every panel, every protocol):
 *
 *   connect (connectTimeout, DNS) ─► outbound PROXY header ─► [TLS: cluster ca/sni/verify, ALPN]
 *      │ ok:      registry.connected, channel { ok: true }, registry.closed when it closes
 *      │ EMFILE:  channel { exhausted: true }, host.noteExhausted(); health untouched
 *      └ failed:  registry.connectFailed, channel { ok: false, error }
 *
 * Rejects with ConnectError only; `tryJacks` (attempts.ts) decides whether to retry.
 */
import type { Socket } from 'node:net';
import type { BackendRegistry } from '../backend-registry.ts';
import { ConnectError, connectBackend } from '../connect.ts';
import { channels } from '../diagnostics.ts';
import type { UpstreamTlsOptions } from '../tls/upstream.ts';
import type { Backend } from '../types.ts';

/** What a dial needs of the runtime (a `PanelRuntime` is one). */
export interface UpstreamHost {
  readonly registry: BackendRegistry;
  /** Counts one connect that failed for lack of descriptors (rate-limited log line). */
  noteExhausted(): void;
}

/** How new connections to one backend are made, for one cluster and (with PROXY) one client. */
export interface DialPlan {
  readonly host: UpstreamHost;
  /** The cluster the request was routed to: health is judged per (cluster, backend). */
  readonly cluster: string;
  /**
   * True when the cluster has an `outlierStatus` and the panel reports every response: then
   * responses, not connects, end a failure streak (a backend answering 503 on every new
   * connection would otherwise never reach its failNum).
   */
  readonly judgedByResponse?: boolean;
  readonly connectTimeout: number;
  /** Upstream TLS (cluster `tls:`, or an `h2` upstream); undefined = plain TCP. */
  readonly tls: UpstreamTlsOptions | undefined;
  /** The outbound PROXY header (src/proxy-out.ts); undefined = none. */
  readonly proxyHeader: Buffer | undefined;
  /** True for splices (half-closes forwarded), false for pooled HTTP connections. */
  readonly allowHalfOpen: boolean;
  /** With `tls`: the ALPN protocol the backend must select (`h2` for HTTP/2 over TLS). */
  readonly requireAlpn?: string;
}

/** Connects `backend` per `plan`; `attempt` is reported on the diagnostics channel. */
export async function dial(backend: Backend, plan: DialPlan, attempt: number): Promise<Socket> {
  const { registry } = plan.host;
  const started = performance.now();
  let socket: Socket;
  try {
    socket = await connectBackend(backend.host, backend.port, plan.connectTimeout, {
      tls: plan.tls,
      preface: plan.proxyHeader,
      allowHalfOpen: plan.allowHalfOpen,
      ...(plan.requireAlpn === undefined ? {} : { requireAlpn: plan.requireAlpn }),
    });
  } catch (e) {
    if (!(e instanceof ConnectError)) throw e;
    if (e.exhausted) {
      plan.host.noteExhausted();
      if (channels.upstreamConnect.hasSubscribers) {
        channels.upstreamConnect.publish({
          backend,
          attempt,
          ok: false,
          latencyMs: 0,
          error: e.message,
          exhausted: true,
        });
      }
    } else {
      registry.connectFailed(backend.id, plan.cluster);
      if (channels.upstreamConnect.hasSubscribers) {
        channels.upstreamConnect.publish({
          backend,
          attempt,
          ok: false,
          latencyMs: performance.now() - started,
          error: e.message,
        });
      }
    }
    throw e;
  }
  const latencyMs = performance.now() - started;
  registry.connected(backend.id, latencyMs, plan.cluster, !plan.judgedByResponse);
  socket.once('close', () => registry.closed(backend.id));
  if (channels.upstreamConnect.hasSubscribers) {
    channels.upstreamConnect.publish({ backend, attempt, ok: true, latencyMs });
  }
  return socket;
}
