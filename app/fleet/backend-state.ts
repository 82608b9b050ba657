/**
 * A backend's admin state in two layers, local and fleet, and the one that applies (issue 43
 * item 4, docs/admin-api.md "Scope"):
 *
 *   fleet layer  <prefix>backends/<id> in etcd, the same on every router (backend-state-sync.ts)
 *   local layer  this router's own calls (`scope=local`, the default; works without `fleet:`)
 *   config       the configured weight, mode `up`
 *
 * 1. Each setting is taken from the highest layer that sets it, separately: the mode from the
 *    fleet when its record says drain or disable, else from the local record, else `up`; the
 *    weight from the fleet record's weight, else the local one's, else the configured weight.
 *    So the fleet wins over local, a local enable cannot undo a fleet drain, and a fleet
 *    enable leaves a router's own local drain in place (each layer is cleared in its scope).
 * 2. The result is written into the backend registry (`setMode`, `setWeight`: the one record
 *    every operator of every panel and worker thread reads), only for backends the registry
 *    has: a fleet record for a backend this router does not list waits until a reload lists it.
 * 3. After every snapshot swap (`retained`, runtime.onSnapshot) the layers are applied again, so
 *    a backend the config lists anew gets the fleet's state, and the local records of backends
 *    the config dropped go (a re-added backend starts `up`, as before this file existed).
 *
 * This file loads whether or not `fleet:` is configured and imports no etcd code.
 */
import { InternalError } from '../../src/base/errors.ts';
import type { AdminMode, BackendRegistry } from '../../src/contracts/backend-registry.ts';
import {
  change,
  modeOf,
  type OverrideChange,
  type OverrideRecord,
  type OverrideState,
} from './backend-state-record.ts';

/** Where an override was set: this router only, or every router of the fleet. */
export type OverrideScope = 'local' | 'fleet';

/** What a fleet-scoped call asks of the fleet (backend-state-sync.ts). */
export interface FleetBackendWriter {
  /** Writes `c` for backend `id` to etcd and applies it here; rejects `SWB_ERR_FLEET` when etcd does not answer. */
  write(id: string, c: OverrideChange): Promise<void>;
}

/** One layer's override of a backend, as `/backends` shows it. */
export interface OverrideView {
  readonly state: OverrideState;
  readonly weight: number | null;
  readonly setBy: string;
  readonly setAt: string;
}

/** A backend's layers as `/backends` shows them, and which layer each setting comes from (null: the config). */
export interface OverridesView {
  readonly overrides: { readonly fleet: OverrideView | null; readonly local: OverrideView | null };
  readonly modeScope: OverrideScope | null;
  readonly weightScope: OverrideScope | null;
}

function shown(r: OverrideRecord | undefined): OverrideView | null {
  return r === undefined ? null : { state: r.state, weight: r.weight ?? null, setBy: r.setBy, setAt: r.setAt };
}

/** The two layers of every backend's admin state, over one registry (see the file header). */
export class BackendStates {
  readonly #registry: BackendRegistry;
  readonly #id: () => string;
  readonly #local = new Map<string, OverrideRecord>();
  #fleet = new Map<string, OverrideRecord>();
  #writer: FleetBackendWriter | undefined;

  /** `id` names this router in the records it sets (the fleet id once there is one). */
  constructor(registry: BackendRegistry, id: () => string) {
    this.#registry = registry;
    this.#id = id;
  }

  /** True once a fleet is attached: `scope=fleet` calls can be made. */
  get fleetScope(): boolean {
    return this.#writer !== undefined;
  }

  /** Attaches the fleet's writer (backend-state-sync.ts); returns the detach. */
  attachFleet(writer: FleetBackendWriter): () => void {
    this.#writer = writer;
    return () => {
      if (this.#writer === writer) this.#writer = undefined;
    };
  }

  /** A `scope=local` call: this router only, set by this router now. */
  setLocal(id: string, c: OverrideChange, at = new Date()): void {
    const next = change(this.#local.get(id), c, this.#id(), at);
    if (next === undefined) this.#local.delete(id);
    else this.#local.set(id, next);
    this.#apply(id);
  }

  /** A `scope=fleet` call: written to etcd, then applied here (the other routers apply it by watch). */
  setFleet(id: string, c: OverrideChange): Promise<void> {
    if (this.#writer === undefined) throw new InternalError('setFleet without a fleet (check fleetScope first)');
    return this.#writer.write(id, c);
  }

  /** The fleet layer becomes `records` (a watch's first load, or a reread after an outage). */
  replaceFleet(records: ReadonlyMap<string, OverrideRecord>): void {
    const before = this.#fleet;
    this.#fleet = new Map(records);
    for (const id of new Set([...before.keys(), ...records.keys()])) this.#apply(id);
  }

  /** One fleet record changed (undefined: deleted). */
  putFleet(id: string, record: OverrideRecord | undefined): void {
    if (record === undefined) this.#fleet.delete(id);
    else this.#fleet.set(id, record);
    this.#apply(id);
  }

  /** After a snapshot swap: local records of backends gone from the registry go; every layer applies again. */
  retained(): void {
    for (const id of [...this.#local.keys()]) if (!this.#registry.has(id)) this.#local.delete(id);
    for (const id of this.#fleet.keys()) this.#apply(id);
    for (const id of this.#local.keys()) this.#apply(id);
  }

  /** The layers of `id` and where its mode and weight come from. */
  view(id: string): OverridesView {
    const fleet = this.#fleet.get(id);
    const local = this.#local.get(id);
    return {
      overrides: { fleet: shown(fleet), local: shown(local) },
      modeScope: modeOf(fleet) !== undefined ? 'fleet' : modeOf(local) !== undefined ? 'local' : null,
      weightScope: fleet?.weight !== undefined ? 'fleet' : local?.weight !== undefined ? 'local' : null,
    };
  }

  /** Step 1 and 2 for one backend. */
  #apply(id: string): void {
    if (!this.#registry.has(id)) return;
    const fleet = this.#fleet.get(id);
    const local = this.#local.get(id);
    const mode: AdminMode = modeOf(fleet) ?? modeOf(local) ?? 'up';
    this.#registry.setMode(id, mode);
    this.#registry.setWeight(id, fleet?.weight ?? local?.weight);
  }
}
