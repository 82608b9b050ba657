/**
 * The built-in panels by name. A panel is created on a runtime and owns its listeners.
 */
import { http2Panel } from '../panels/http2/index.ts';
import { netPanel } from '../panels/net/index.ts';
import { workerPanel } from '../panels/worker/index.ts';
import type { Runtime } from './runtime.ts';
import type { Panel } from './types.ts';

/** A panel that can report its bound addresses (port 0 resolved), for tests and logs. */
export interface BoundPanel extends Panel {
  addresses(): Record<string, { host: string; port: number }>;
}

export interface PanelFactory {
  readonly name: string;
  create(runtime: Runtime): BoundPanel;
}

export const builtinPanels: Readonly<Record<string, PanelFactory>> = {
  net: netPanel,
  http2: http2Panel,
  worker: workerPanel,
};

/** The factory for a panel name; throws with the known names. */
export function resolvePanel(name: string): PanelFactory {
  const f = Object.hasOwn(builtinPanels, name) ? builtinPanels[name] : undefined;
  if (f === undefined)
    throw new Error(`unknown panel ${JSON.stringify(name)}; known: ${Object.keys(builtinPanels).join(', ')}`);
  return f;
}
