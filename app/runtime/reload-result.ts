/**
 * What a reload reports and what a part that outlives an engine prepares for one (types only):
 * app/reload.ts produces them, the admin listener (app/admin/) reads and stages them, below the
 * reloader so that it need not import it.
 */

/** What a reload did. */
export interface ReloadResult {
  readonly ok: boolean;
  /** False when the config text was identical (nothing rebuilt) or the reload failed. */
  readonly changed: boolean;
  /** The config version serving after this reload. */
  readonly version: string;
  /** One line per problem, each naming its config path (empty when ok). */
  readonly errors: readonly string[];
  /** What triggered it: 'watch', 'SIGHUP', 'api' or 'call'. */
  readonly trigger: string;
}

/** A prepared change of something outside the engine: applied after the swap, or undone. */
export interface StagedChange {
  commit(): void;
  abort(): Promise<void> | void;
}
