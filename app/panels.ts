/**
 * The built-in panels by name. A panel is created on a runtime and owns its listeners; the
 * contract (`PanelFactory` and its optional capabilities) is the core's (src/panel/capabilities.ts).
 */
import { workerPanel } from '../panels/worker/index.ts';
import { SwitchboardError } from '../src/base/errors.ts';
import { didYouMean } from '../src/base/suggest.ts';
import type { AnyPanelFactory } from '../src/panel/contract.ts';
import { enginePanels } from './plugins/engine-panels.ts';

export type { AnyPanelFactory, BoundPanel, PanelFactory } from '../src/panel/contract.ts';

export const builtinPanels: Readonly<Record<string, AnyPanelFactory>> = {
  ...enginePanels,
  // Each worker thread runs app/worker/entry.ts: a runtime and an engine panel of its own.
  worker: workerPanel(new URL('./worker/entry.ts', import.meta.url), enginePanels),
};

/** The factory for a panel name; throws with the known names. */
export function resolvePanel(name: string): AnyPanelFactory {
  const f = Object.hasOwn(builtinPanels, name) ? builtinPanels[name] : undefined;
  if (f === undefined)
    throw new SwitchboardError(
      'SWB_ERR_PLUGIN',
      `unknown panel ${JSON.stringify(name)}${didYouMean(name, Object.keys(builtinPanels))}; known: ${Object.keys(builtinPanels).join(', ')}`,
    );
  return f;
}
