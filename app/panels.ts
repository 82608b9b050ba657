/**
 * The built-in panels by name. A panel is created on a runtime and owns its listeners; the
 * contract (`PanelFactory` and its optional capabilities) is the core's (src/panel/capabilities.ts).
 */
import { h2cStreamRouter, http2Panel } from '../panels/http2/index.ts';
import { netPanelWith } from '../panels/net/index.ts';
import { workerPanel } from '../panels/worker/index.ts';
import { didYouMean } from '../src/base/suggest.ts';
import type { AnyPanelFactory } from '../src/panel/contract.ts';

export type { AnyPanelFactory, BoundPanel, PanelFactory } from '../src/panel/contract.ts';

/**
 * The panels a worker thread can run. The net panel is given the http2 panel's stream router:
 * with `listeners[].h2c: route` an h2c connection is handed to it, every stream routed.
 */
const engines = { net: netPanelWith(h2cStreamRouter), http2: http2Panel } as const;

export const builtinPanels: Readonly<Record<string, AnyPanelFactory>> = {
  ...engines,
  // Each worker thread runs app/worker-thread.ts: a runtime and an engine panel of its own.
  worker: workerPanel(new URL('./worker-thread.ts', import.meta.url), engines),
};

/** The factory for a panel name; throws with the known names. */
export function resolvePanel(name: string): AnyPanelFactory {
  const f = Object.hasOwn(builtinPanels, name) ? builtinPanels[name] : undefined;
  if (f === undefined)
    throw new Error(
      `unknown panel ${JSON.stringify(name)}${didYouMean(name, Object.keys(builtinPanels))}; known: ${Object.keys(builtinPanels).join(', ')}`,
    );
  return f;
}
