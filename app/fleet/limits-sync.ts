/**
 * What the fleet's counters and their sync share (issue 43 item 3, types and two small helpers):
 * a counter hands the sync one script call per key it used since the last sync; the sync runs
 * them in one pipelined round trip and gives each call its reply.
 */

/** Which Lua script a call runs (limits-scripts.ts). */
export type LimitsScript = 'rate' | 'inFlight';

/** One script call of a sync, and where its reply goes. */
export interface SyncCall {
  readonly script: LimitsScript;
  /** The Redis key (KEYS[1]). */
  readonly key: string;
  readonly args: readonly string[];
  /** The script's reply: two numbers, sent as strings (a Lua number would be truncated). */
  settle(reply: readonly [string, string]): void;
}

/** The fleet as the counters see it: how many routers share a limit and which one this is. */
export interface LimitsShare {
  /** Live routers (at least 1). */
  readonly count: number;
  /** This router's place among them (sorted ids), 0 when unknown. */
  readonly rank: number;
}

/** Whether the counters decide from their shared allowances or from the local fallback. */
export type LimitsMode = 'shared' | 'fallback';

/** What a fleet counter reads of its store at each decision (synchronous). */
export interface LimitsState {
  readonly mode: LimitsMode;
  share(): LimitsShare;
  /** This router's id (the scripts' hash fields). */
  readonly id: string;
  /** How long a key is young in Redis (ms): every live router's first sync of it is due by then. */
  readonly young: number;
}

/** A counter the sync asks for calls, and tells of a return from the fallback. */
export interface SyncedCounter {
  /** Appends a call for each key used since the last sync (and each held key due a refresh). */
  collect(out: SyncCall[], now: number): void;
  /** Shared counting resumes after the fallback: forget allowances the outage made stale. */
  resume(): void;
}

/**
 * `left` split among `n` routers as whole units: each gets ⌊left ÷ n⌋ and the remainder goes
 * to the routers whose turn it is (`(rank + turn) mod n` below it), so the shares sum to
 * `left` and a remainder rotates instead of starving the same router.
 */
export function wholeShare(left: number, n: number, rank: number, turn: number): number {
  if (left <= 0) return 0;
  const base = Math.floor(left / n);
  const extra = left - base * n;
  return base + ((rank + turn) % n < extra ? 1 : 0);
}
