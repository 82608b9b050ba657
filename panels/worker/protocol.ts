/**
 * The messages between the main thread (control plane) and a worker thread (data plane). Every
 * field is plain data: nothing here fails `structuredClone`.
 */

import type { SharedAdmissionState } from '../../src/admission/shared-admission.ts';
import type { AccessRecord } from '../../src/base/log.ts';
import type { Config } from '../../src/config/schema.ts';
import type { SharedCountersState } from '../../src/policy/shared-counters.ts';
import type { SharedRegistryState } from '../../src/registry/shared.ts';
import type { IssuedUpdate } from '../../src/tls/issued.ts';
import type { TracerCounts } from '../../src/tracing/tracer.ts';

/**
 * How a worker builds its address book: a routing table (every built-in book: `bfe`, sqlite,
 * etcd) or a file-book entry list, compiled in the worker; or a custom book's module, created
 * in each worker from its path.
 */
export type BookSpec =
  | { readonly kind: 'bfe'; readonly table: unknown; readonly version: number }
  | { readonly kind: 'file'; readonly entries: unknown; readonly version: number }
  | { readonly kind: 'module'; readonly name: string; readonly options: unknown };

/** One config version as a worker needs it. */
export interface EngineSpec {
  /** The main thread's engine version: workers report it, so all agree on one string. */
  readonly version: string;
  readonly file: string;
  readonly dir: string;
  readonly text: string;
  readonly config: Config;
  readonly operator: { readonly name: string; readonly options: unknown };
  readonly book: BookSpec;
  /** The owner registry's id → slot map. */
  readonly slots: [string, number][];
  /**
   * The shared store the policies count in (the main thread compiled them on it first): the
   * thread attaches and compiles on it, so counts are process-wide.
   */
  readonly policyCounters: SharedCountersState | undefined;
}

/** What a worker starts with (`workerData`). */
export interface WorkerInit {
  readonly index: number;
  readonly engine: EngineSpec;
  readonly shared: SharedRegistryState;
  /** The connection caps every thread counts in (src/admission/shared-admission.ts). */
  readonly admission: SharedAdmissionState;
  readonly logLevel: string;
  /** Certificates obtained at run time and pending ACME challenges (src/tls/issued.ts). */
  readonly issued: IssuedUpdate[];
}

/** Main → worker. */
export type ToWorker =
  | { readonly t: 'prepare'; readonly seq: number; readonly engine: EngineSpec }
  | { readonly t: 'commit'; readonly seq: number }
  | { readonly t: 'abort'; readonly seq: number }
  | {
      readonly t: 'snapshot';
      readonly seq: number;
      readonly version: string;
      readonly book: BookSpec;
      readonly slots: [string, number][];
    }
  /** An ACME certificate or challenge for the worker's IssuedCertificates; acked once applied. */
  | { readonly t: 'issued'; readonly seq: number; readonly update: IssuedUpdate }
  | { readonly t: 'close' };

/** A diagnostics-channel message forwarded to the main thread (plain parts only). */
export interface ForwardedEvent {
  readonly channel: 'requestEnd' | 'connectionEnd' | 'upstreamConnect';
  readonly message: unknown;
}

/** Worker → main. */
export type FromWorker =
  | {
      readonly t: 'ready';
      readonly addresses: Record<string, { host: string; port: number }>;
      readonly version: string;
    }
  | { readonly t: 'ack'; readonly seq: number; readonly version: string }
  | { readonly t: 'nack'; readonly seq: number; readonly error: string }
  | {
      readonly t: 'batch';
      readonly access: AccessRecord[];
      readonly events: ForwardedEvent[];
      readonly failed: string[];
    }
  /** `tracing`: this thread's tracer counts (with `tracing:`), summed on the main thread's /metrics. */
  | { readonly t: 'stats'; readonly open: Record<string, number>; readonly tracing?: TracerCounts }
  | { readonly t: 'closed' }
  /** `code`: the SwitchboardError code, when the failure was one (a bind failure stays SWB_ERR_LISTEN). */
  | { readonly t: 'fatal'; readonly error: string; readonly code?: string };
