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
import { performance } from 'node:perf_hooks';
import { channels } from '../base/diagnostics.ts';
import type { BackendRegistry } from '../contracts/backend-registry.ts';
import type { Backend } from '../contracts/types.ts';
import type { UpstreamTlsOptions } from '../tls/upstream.ts';
import { type ConnectError, type Connected, type ConnectOptions, openBackend } from './connect.ts';

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
  /** The outbound PROXY header (src/upstream/proxy-out.ts); undefined = none. */
  readonly proxyHeader: Buffer | undefined;
  /** True for splices (half-closes forwarded), false for pooled HTTP connections. */
  readonly allowHalfOpen: boolean;
  /** With `tls`: the ALPN protocol the backend must select (`h2` for HTTP/2 over TLS). */
  readonly requireAlpn?: string;
  /** The caller takes each read as it comes (a splice, a per-request link): reused buffers (src/data-path/own-reads.ts). */
  readonly ownReads?: boolean;
}

/** Connects `backend` per `plan`; `attempt` is reported on the diagnostics channel. */
export function dial(backend: Backend, plan: DialPlan, attempt: number): Promise<Socket> {
  return new Promise((resolve, reject) =>
    dialThen(backend, plan, attempt, (err, socket) => (err === undefined ? resolve(socket!) : reject(err))),
  );
}

/** `dial` with a callback (the per-connection hot path: no promise); `done` runs once. */
export function dialThen(backend: Backend, plan: DialPlan, attempt: number, done: Connected): void {
  const started = performance.now();
  const options: ConnectOptions =
    plan.requireAlpn === undefined
      ? {
          tls: plan.tls,
          preface: plan.proxyHeader,
          allowHalfOpen: plan.allowHalfOpen,
          ownReads: plan.ownReads === true,
        }
      : { tls: plan.tls, preface: plan.proxyHeader, allowHalfOpen: plan.allowHalfOpen, requireAlpn: plan.requireAlpn };
  openBackend(backend.host, backend.port, plan.connectTimeout, options, (e, socket) => {
    if (e === undefined) connected(backend, plan, attempt, started, socket!);
    else failed(backend, plan, attempt, started, e);
    done(e, socket);
  });
}

/** Who hears that a dialled socket closed (it closes once): one shared 'close' listener, no closure or `once` wrapper. */
interface Dialled {
  readonly registry: BackendRegistry;
  readonly id: string;
}
const kDialled = Symbol('switchboard.dialled');

function dialledClose(this: Socket & { [kDialled]?: Dialled }): void {
  const d = this[kDialled]!;
  d.registry.closed(d.id);
}

function connected(backend: Backend, plan: DialPlan, attempt: number, started: number, socket: Socket): void {
  const { registry } = plan.host;
  const latencyMs = performance.now() - started;
  registry.connected(backend.id, latencyMs, plan.cluster, !plan.judgedByResponse);
  (socket as Socket & { [kDialled]?: Dialled })[kDialled] = { registry, id: backend.id };
  socket.on('close', dialledClose);
  if (channels.upstreamConnect.hasSubscribers) {
    channels.upstreamConnect.publish({ backend, attempt, ok: true, latencyMs });
  }
}

function failed(backend: Backend, plan: DialPlan, attempt: number, started: number, e: ConnectError): void {
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
    return;
  }
  plan.host.registry.connectFailed(backend.id, plan.cluster);
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
