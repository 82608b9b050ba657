/**
 * The running router's backend registry as the explainer reads it: every record exactly as the
 * data plane's operators see it (`get(id, cluster)`: availability folding health and the admin
 * mode, the weight override, `upSince` for slow start, active connections), and nothing written.
 *
 * 1. `get` never creates a record: it answers the (cluster, backend) record, else the backend's
 *    own, else a fresh one (what the registry would create on a first request: up, no override).
 * 2. Every report and setter is a broken invariant here (an operator asking to count or change
 *    something): it throws InternalError rather than touch the router's state.
 * 3. `observe` hears nothing: the explainer's operator answers one question and is closed.
 */
import { InternalError } from '../../src/base/errors.ts';
import type { BackendRegistry, BackendState } from '../../src/contracts/backend-registry.ts';

/** The record the registry would create for a backend it has never seen. */
function fresh(id: string, cluster: string): BackendState {
  return {
    id,
    cluster,
    active: 0,
    total: 0,
    failures: 0,
    available: true,
    healthy: true,
    mode: 'up',
    weightOverride: undefined,
    latencyEwma: 0,
    upSince: 0,
  };
}

function readOnly(what: string): never {
  throw new InternalError(`explain: the registry view is read-only (${what})`);
}

/** Step 1–3: a read-only view of `registry`. */
export function registryView(registry: BackendRegistry): BackendRegistry {
  const read = (id: string, cluster = ''): BackendState =>
    registry.peek(id, cluster) ?? registry.peek(id) ?? fresh(id, cluster);
  return {
    now: () => registry.now(),
    get: read,
    peek: (id, cluster) => registry.peek(id, cluster),
    has: (id) => registry.has(id),
    all: () => registry.all(),
    clusters: (id) => registry.clusters(id),
    observe: () => () => {},
    weightEpoch: () => registry.weightEpoch(),
    connected: () => readOnly('connected'),
    connectFailed: () => readOnly('connectFailed'),
    responseFailed: () => readOnly('responseFailed'),
    responseSucceeded: () => readOnly('responseSucceeded'),
    closed: () => readOnly('closed'),
    setAvailable: () => readOnly('setAvailable'),
    setMode: () => readOnly('setMode'),
    setWeight: () => readOnly('setWeight'),
    retain: () => readOnly('retain'),
  };
}
