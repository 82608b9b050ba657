/**
 * The tracing reload stage (app/reload.ts `addStage`): `tracing:` is read when the router starts
 * (each worker thread starts its tracer from the same section), so a reload that adds, removes or
 * changes it fails, naming the section, and the running config stays as it was. Imports no
 * OpenTelemetry (it is registered whether or not `tracing:` is set).
 */
import { SwitchboardError } from '../../src/base/errors.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';

/** Refuses a reload whose `tracing:` section differs from the running one; changes nothing. */
export async function tracingReloadStage(next: LoadedConfig, current: LoadedConfig): Promise<undefined> {
  const from = current.config.tracing;
  const to = next.config.tracing;
  if (JSON.stringify(to) === JSON.stringify(from)) return undefined;
  const what = from === undefined ? 'adding' : to === undefined ? 'removing' : 'changing';
  throw new SwitchboardError('SWB_ERR_CONFIG', `tracing: ${what} the tracing section needs a restart`);
}
