/**
 * Runtime control of one backend (HAProxy's `set server … state drain|maint|ready` and
 * `set server … weight`), and the `/backends` view that shows it.
 *
 * | method | path                        | effect                                                   |
 * |--------|-----------------------------|----------------------------------------------------------|
 * | GET    | /backends/{id}              | { version, backend }: one backend as `/backends` shows it |
 * | POST   | /backends/{id}/drain        | mode `draining`: no new connection or request; open ones finish |
 * | POST   | /backends/{id}/disable      | mode `disabled`: the same for routing, reported as out of service; health checks paused |
 * | POST   | /backends/{id}/enable       | mode `up` again; the slow-start ramp restarts (checks restart from DOWN after disable) |
 * | POST   | /backends/{id}/weight       | body `{"weight": N}` (integer ≥ 0) overrides the configured weight; `null` clears |
 *
 * 1. `{id}` is the `id` that `/backends` shows (`host:port`, `[v6]:port`), URL-encoded or not.
 *    It names the backend in every cluster and sub-cluster that lists it. Unknown → 404
 *    `backend_not_found`; a bad body → 400 `bad_request`.
 * 2. The state is written into the backend registry (src/contracts/backend-registry.ts `setMode`,
 *    `setWeight`): the one record every operator of every panel and worker thread consults, so
 *    no panel has code of its own for it. A drained backend is not `available`, which every
 *    operator already skips; the override replaces the configured weight in each pool.
 * 3. The record lives as long as the backend stays in the config: a reload keeps it, a reload
 *    that removes the backend drops it (adding it back starts `up` with the configured weight).
 * 4. Every answer is `{ ok: true, backend }` with the backend as `/backends` shows it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorCode, SwitchboardError } from '../../src/base/errors.ts';
import type { AdminMode, BackendState } from '../../src/contracts/backend-registry.ts';
import { type BackendEntry, isBackendLister } from '../../src/contracts/types.ts';
import { slowStartWeight } from '../../src/routing/slow-start.ts';
import { stateOf } from '../metrics/backend-states.ts';
import type { AdminDeps } from './deps.ts';

/** Largest weight an override may set (shared memory stores weight + 1 in an Int32). */
export const MAX_WEIGHT = 1_000_000;

/** Bodies larger than this are refused (400). */
const MAX_BODY = 4096;

/** The code of each `error` an admin answer can carry. */
const ADMIN_CODES = {
  bad_request: 'SWB_ERR_BAD_REQUEST',
  not_found: 'SWB_ERR_NOT_FOUND',
  backend_not_found: 'SWB_ERR_BACKEND_NOT_FOUND',
} as const satisfies Record<string, ErrorCode>;

/** An admin error answer: `status`, and `answer` as its JSON `error` and X-Switchboard-Error. */
export class AdminError extends SwitchboardError {
  readonly status: number;
  /** The `error` the answer carries: `bad_request` (code `SWB_ERR_BAD_REQUEST`), `backend_not_found`… */
  readonly answer: keyof typeof ADMIN_CODES;
  constructor(status: number, answer: keyof typeof ADMIN_CODES, message: string) {
    super(ADMIN_CODES[answer], message);
    this.name = 'AdminError';
    this.status = status;
    this.answer = answer;
  }
}

function isoTime(ms: number): string | null {
  return ms === 0 ? null : new Date(ms).toISOString();
}

/** The book's entries by backend id (the configured weight and slow start of each cluster). */
function entriesById(deps: AdminDeps): Map<string, BackendEntry[]> {
  const out = new Map<string, BackendEntry[]>();
  const book = deps.runtime.engine.book;
  if (!isBackendLister(book)) return out;
  for (const e of book.listBackends()) {
    const list = out.get(e.backend.id);
    if (list === undefined) out.set(e.backend.id, [e]);
    else list.push(e);
  }
  return out;
}

function view(deps: AdminDeps, s: BackendState, entries: readonly BackendEntry[], checked: ReadonlySet<string>) {
  const { registry, health } = deps.runtime;
  const now = registry.now();
  const override = s.weightOverride;
  const configured = entries[0]?.backend.weight;
  return {
    id: s.id,
    state: stateOf(s),
    mode: s.mode,
    // Out of service and no connection left: safe to stop the server.
    drained: s.mode !== 'up' && s.active === 0,
    available: s.available,
    healthy: s.healthy,
    weight: override ?? configured ?? null,
    weightOverride: override ?? null,
    active: s.active,
    total: s.total,
    failures: s.failures,
    latencyEwmaMs: Math.round(s.latencyEwma * 1000) / 1000,
    upSince: isoTime(s.upSince),
    healthChecked: checked.has(s.id),
    probing: health.probing(s.id),
    // Health is judged per cluster: the fields above are the backend as a whole (down while any
    // cluster holds it down), these are each cluster's own verdict, weight and slow-start ramp.
    clusters: registry.clusters(s.id).map((c) => {
      const e = entries.find((x) => (x.cluster ?? '') === c.cluster);
      const slowStartMs = e?.policy.slowStart ?? 0;
      const w = override ?? e?.backend.weight ?? null;
      return {
        cluster: c.cluster,
        available: c.available,
        healthy: c.healthy,
        failures: c.failures,
        upSince: isoTime(c.upSince),
        probing: health.probing(s.id, c.cluster),
        weight: w,
        configuredWeight: e?.backend.weight ?? null,
        slowStartMs,
        rampPercent: Math.round(slowStartWeight(100, c, slowStartMs, now) * 100) / 100,
      };
    }),
  };
}

/** Every backend of the registry, as `/backends` shows them. */
export function backendsView(deps: AdminDeps): unknown[] {
  const entries = entriesById(deps);
  const checked = new Set(deps.runtime.health.ids());
  return [...deps.runtime.registry.all()].map((s) => view(deps, s, entries.get(s.id) ?? [], checked));
}

/** The ids an admin call may name: the book's listed backends, else the registry's records. */
function known(deps: AdminDeps, id: string): boolean {
  const book = deps.runtime.engine.book;
  if (isBackendLister(book)) {
    for (const e of book.listBackends()) if (e.backend.id === id) return true;
    return false;
  }
  return deps.runtime.registry.has(id);
}

/** `{id}` decoded and checked against the config; throws 404 for an unknown backend. */
export function backendId(deps: AdminDeps, raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new AdminError(400, 'bad_request', `admin: backend id ${JSON.stringify(raw)} is not valid URL encoding`);
  }
  if (!known(deps, id)) {
    throw new AdminError(
      404,
      'backend_not_found',
      `admin: no backend ${JSON.stringify(id)} in the running config (GET /backends lists the ids, host:port)`,
    );
  }
  return id;
}

function one(deps: AdminDeps, id: string) {
  const s = deps.runtime.registry.get(id);
  const entries = entriesById(deps).get(id) ?? [];
  return view(deps, s, entries, new Set(deps.runtime.health.ids()));
}

/** The handler of `GET /backends/{id}`: one backend as `/backends` shows it. */
export function oneHandler(json: Answer) {
  return (_req: IncomingMessage, res: ServerResponse, deps: AdminDeps, params: Params): void => {
    const id = backendId(deps, params.id ?? '');
    json(res, 200, { version: deps.runtime.engine.version, backend: one(deps, id) });
  };
}

/** Reads a small JSON body; 400 when it is too large or not JSON. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new AdminError(400, 'bad_request', `admin: request body larger than ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AdminError(400, 'bad_request', 'admin: the request body is not valid JSON');
  }
}

/** The weight of a `{"weight": N}` body: an integer 0…MAX_WEIGHT, or null to clear the override. */
export function parseWeight(body: unknown): number | undefined {
  const weight = (body as { weight?: unknown } | null | undefined)?.weight;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('weight' in body)) {
    throw new AdminError(400, 'bad_request', 'admin: expected a JSON body {"weight": N} (an integer ≥ 0, or null)');
  }
  const extra = Object.keys(body).filter((k) => k !== 'weight');
  if (extra.length > 0) throw new AdminError(400, 'bad_request', `admin: unknown field ${JSON.stringify(extra[0])}`);
  if (weight === null) return undefined;
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT) {
    throw new AdminError(
      400,
      'bad_request',
      `admin: weight must be an integer from 0 to ${MAX_WEIGHT} (or null), got ${JSON.stringify(weight)}`,
    );
  }
  return weight;
}

type Params = Readonly<Record<string, string>>;
type Answer = (res: ServerResponse, status: number, value: unknown) => void;

/** A handler setting mode `mode` on backend `{id}`. */
export function modeHandler(mode: AdminMode, json: Answer) {
  return (_req: IncomingMessage, res: ServerResponse, deps: AdminDeps, params: Params): void => {
    const id = backendId(deps, params.id ?? '');
    deps.runtime.registry.setMode(id, mode);
    deps.runtime.logger.info({ backend: id, mode }, `admin: backend ${mode}`);
    json(res, 200, { ok: true, backend: one(deps, id) });
  };
}

/** The handler of `POST /backends/{id}/weight`. */
export function weightHandler(json: Answer) {
  return async (req: IncomingMessage, res: ServerResponse, deps: AdminDeps, params: Params): Promise<void> => {
    const id = backendId(deps, params.id ?? '');
    const weight = parseWeight(await readJson(req));
    deps.runtime.registry.setWeight(id, weight);
    deps.runtime.logger.info({ backend: id, weight: weight ?? null }, 'admin: backend weight');
    json(res, 200, { ok: true, backend: one(deps, id) });
  };
}
