/**
 * Where a registry keeps the numbers of one backend: two small cells the ledger
 * (ledger.ts) reads and writes. `LocalRegistry` uses the plain cells below;
 * `SharedRegistry` (shared.ts) implements the same interfaces over SharedArrayBuffer
 * slots so worker threads see one set of numbers.
 */

/** Connection counters of one backend, whatever cluster routed the connection, and its admin state. */
export interface CounterCell {
  readonly active: number;
  readonly total: number;
  readonly latencyEwma: number;
  /** The admin mode as its index in `ADMIN_MODES` (0 = up). */
  readonly mode: number;
  /** The admin weight override; -1 = none. */
  readonly weight: number;
  connect(latencyMs: number): void;
  close(): void;
  setMode(mode: number): void;
  setWeight(weight: number): void;
}

/** Health of one backend for one cluster. */
export interface HealthCell {
  readonly failures: number;
  readonly available: boolean;
  readonly upSince: number;
  fail(): void;
  succeed(): void;
  /** Moves down or up; coming back sets `upSince = now` and clears failures. True when it changed. */
  set(available: boolean, now: number): boolean;
  /** Overwrites the state (a new record inherits; slow start starts at `upSince`). */
  reset(available: boolean, upSince: number, failures: number): void;
}

/** Weight of a new sample in the latency EWMA when it is not a new peak. */
const EWMA_DECAY = 0.3;

/** Peak EWMA: a slower sample is taken at once, a faster one decays in (tower/Finagle PeakEwma). */
export function peakEwma(previous: number, sample: number): number {
  return sample > previous ? sample : previous + EWMA_DECAY * (sample - previous);
}

/** Counters in plain fields (one thread). */
export class LocalCounters implements CounterCell {
  active = 0;
  total = 0;
  latencyEwma = 0;
  mode = 0;
  weight = -1;
  setMode(mode: number): void {
    this.mode = mode;
  }
  setWeight(weight: number): void {
    this.weight = weight;
  }
  connect(latencyMs: number): void {
    this.active++;
    this.total++;
    this.latencyEwma = peakEwma(this.latencyEwma, latencyMs);
  }
  close(): void {
    if (this.active > 0) this.active--;
  }
}

/** Health in plain fields (one thread). */
export class LocalHealth implements HealthCell {
  failures = 0;
  available = true;
  upSince = 0;
  fail(): void {
    this.failures++;
  }
  succeed(): void {
    this.failures = 0;
  }
  set(available: boolean, now: number): boolean {
    if (this.available === available) return false;
    this.available = available;
    if (available) {
      this.upSince = now;
      this.failures = 0;
    }
    return true;
  }
  reset(available: boolean, upSince: number, failures: number): void {
    this.available = available;
    this.upSince = upSince;
    this.failures = failures;
  }
}
