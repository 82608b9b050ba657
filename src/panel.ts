/**
 * The panel plugin contract (DESIGN "The three roles"): a factory registered by name whose
 * `create` gets the runtime; the instance owns its listeners. Optional capabilities are second
 * interfaces the composition layer detects (STYLE §3).
 */
import type { ListenerConfig } from './config/schema.ts';
import type { PanelRuntime } from './engine.ts';
import type { Panel } from './types.ts';

/** A panel that can report its bound addresses (port 0 resolved), for tests and logs. */
export interface BoundPanel extends Panel {
  addresses(): Record<string, { host: string; port: number }>;
}

export interface PanelFactory {
  readonly name: string;
  create(runtime: PanelRuntime): BoundPanel;
}

/** Optional: panels that apply listener changes in place on reload. */
export interface ReconfigurablePanel {
  reconfigure(listeners: readonly ListenerConfig[]): Promise<() => void>;
}
