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
 * 4. Every answer is `{ ok: true, scope, backend }` with the backend as `/backends` shows it.
 * 5. Scope (issue 43 item 4): `?scope=fleet` or a body field `{"scope": "fleet"}` (the same; both
 *    given must agree) writes the override to etcd for every router of the fleet; `local` (the
 *    default) acts on this router only and works without `fleet:`. The layers and which one wins
 *    (the fleet, setting by setting) are app/fleet/backend-state.ts; `/backends` shows both with
 *    who set them and when (`overrides`, `modeScope`, `weightScope`). `scope=fleet` without
 *    `fleet:` → 409 `fleet_not_configured`; etcd not answering → 503 `fleet_unavailable`
 *    (nothing changed anywhere; the last fleet state stays applied).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorCode, SwitchboardError } from '../../src/base/errors.ts';
import type { AdminMode, BackendState } from '../../src/contracts/backend-registry.ts';
import { type BackendEntry, isBackendLister } from '../../src/contracts/types.ts';
import { slowStartWeight } from '../../src/routing/slow-start.ts';
import type { OverrideScope } from '../fleet/backend-state.ts';
import { MAX_WEIGHT, type OverrideChange } from '../fleet/backend-state-record.ts';
import { stateOf } from '../metrics/backend-states.ts';
import type { AdminDeps } from './deps.ts';

/** Bodies larger than this are refused (400). */
const MAX_BODY = 4096;

/** The code of each `error` an admin answer can carry. */
const ADMIN_CODES = {
  bad_request: 'SWB_ERR_BAD_REQUEST',
  not_found: 'SWB_ERR_NOT_FOUND',
  backend_not_found: 'SWB_ERR_BACKEND_NOT_FOUND',
  // Both fleet answers carry the fleet's code; `error` tells them apart.
  fleet_not_configured: 'SWB_ERR_FLEET',
  fleet_unavailable: 'SWB_ERR_FLEET',
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
    ...deps.backendStates.view(s.id),
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
  const extra = Object.keys(body).filter((k) => k !== 'weight' && k !== 'scope');
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

function scopeValue(value: unknown, where: string): OverrideScope {
  if (value === 'local' || value === 'fleet') return value;
  throw new AdminError(400, 'bad_request', `admin: ${where} must be "local" or "fleet", got ${JSON.stringify(value)}`);
}

/**
 * The scope of a call (step 5): `?scope=` or the body's `scope`, `local` when neither says.
 * A mode call's body may hold `scope` only (no body is fine).
 */
export function parseScope(req: IncomingMessage, body: unknown, bodyFields: readonly string[]): OverrideScope {
  const query = new URL(req.url ?? '/', 'http://admin').searchParams.get('scope');
  let fromBody: unknown;
  if (body !== undefined) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AdminError(400, 'bad_request', 'admin: expected a JSON object body, like {"scope": "fleet"}');
    }
    const extra = Object.keys(body).filter((k) => k !== 'scope' && !bodyFields.includes(k));
    if (extra.length > 0) throw new AdminError(400, 'bad_request', `admin: unknown field ${JSON.stringify(extra[0])}`);
    fromBody = (body as { scope?: unknown }).scope;
  }
  const q = query === null ? undefined : scopeValue(query, 'scope (query)');
  const b = fromBody === undefined ? undefined : scopeValue(fromBody, 'scope (body)');
  if (q !== undefined && b !== undefined && q !== b) {
    throw new AdminError(400, 'bad_request', `admin: scope ${q} in the query but ${b} in the body`);
  }
  return q ?? b ?? 'local';
}

type Params = Readonly<Record<string, string>>;
type Answer = (res: ServerResponse, status: number, value: unknown) => void;

/** Applies `c` to backend `id` in `scope`: this router's layer, or etcd for the whole fleet. */
async function apply(deps: AdminDeps, id: string, c: OverrideChange, scope: OverrideScope): Promise<void> {
  const states = deps.backendStates;
  if (scope === 'local') {
    states.setLocal(id, c);
    return;
  }
  if (!states.fleetScope) {
    throw new AdminError(
      409,
      'fleet_not_configured',
      'admin: scope fleet needs a fleet: section (etcd) in the config; without it use scope local (the default)',
    );
  }
  try {
    await states.setFleet(id, c);
  } catch (e) {
    if (!(e instanceof SwitchboardError) || e.code !== 'SWB_ERR_FLEET') throw e;
    throw new AdminError(
      503,
      'fleet_unavailable',
      `admin: etcd did not answer; backend ${id} was not changed for the fleet (the last fleet state stays applied): ${e.message}`,
    );
  }
}

/** A handler setting mode `mode` on backend `{id}`. */
export function modeHandler(mode: AdminMode, json: Answer) {
  return async (req: IncomingMessage, res: ServerResponse, deps: AdminDeps, params: Params): Promise<void> => {
    const id = backendId(deps, params.id ?? '');
    const scope = parseScope(req, await readJson(req), []);
    await apply(deps, id, { kind: 'mode', mode }, scope);
    deps.runtime.logger.info({ backend: id, mode, scope }, `admin: backend ${mode}`);
    json(res, 200, { ok: true, scope, backend: one(deps, id) });
  };
}

/** The handler of `POST /backends/{id}/weight`. */
export function weightHandler(json: Answer) {
  return async (req: IncomingMessage, res: ServerResponse, deps: AdminDeps, params: Params): Promise<void> => {
    const id = backendId(deps, params.id ?? '');
    const body = await readJson(req);
    const weight = parseWeight(body);
    const scope = parseScope(req, body, ['weight']);
    await apply(deps, id, { kind: 'weight', weight }, scope);
    deps.runtime.logger.info({ backend: id, weight: weight ?? null, scope }, 'admin: backend weight');
    json(res, 200, { ok: true, scope, backend: one(deps, id) });
  };
}
