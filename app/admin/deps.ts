/**
 * What the admin endpoints read, declared apart from the handlers (types only) so that routes.ts,
 * which lists the handlers, and the handler files, which take these, do not import each other.
 * The reloader and the dashboard are seen through what the endpoints ask of them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AcmeManager } from '../acme/manager.ts';
import type { BackendStates } from '../fleet/backend-state.ts';
import type { Fleet } from '../fleet/contract.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ReloadResult } from '../runtime/reload-result.ts';
import type { Runtime } from '../runtime/runtime.ts';

/** What `POST /reload` asks of the reloader (app/reload.ts `Reloader`). */
export interface AdminReloader {
  reload(trigger: string): Promise<ReloadResult>;
}

/** What `GET /ui/data` asks of the dashboard's state (dashboard.ts `Dashboard`). */
export interface DashboardData {
  data(since: number): unknown;
}

/** What the admin endpoints read. */
export interface AdminDeps {
  readonly runtime: Runtime;
  readonly metrics: Metrics;
  readonly reloader: AdminReloader;
  /** True once listeners are bound and until shutdown begins. */
  ready(): boolean;
  /** The dashboard's state (traffic history, reloads); server.ts creates it. */
  readonly dashboard?: DashboardData;
  /** The ACME manager, when the router runs one. */
  readonly acme?: AcmeManager | undefined;
  /** The backends' admin overrides, local and fleet (app/fleet/backend-state.ts). */
  readonly backendStates: BackendStates;
  /** The fleet, when `fleet:` is configured (app/fleet/). */
  readonly fleet?: Fleet | undefined;
}

/** One endpoint: `params` holds the `{name}` segments of its key (routes.ts). */
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  deps: AdminDeps,
  params: Readonly<Record<string, string>>,
) => void | Promise<void>;
