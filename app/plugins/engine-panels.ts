/**
 * The panels that serve connections themselves: `net` and `http2`, on the main thread or on
 * each worker thread of the `worker` panel (app/worker/entry.ts). The net panel is given the
 * http2 panel's stream router: with `listeners[].h2c: route` an h2c connection is handed to it,
 * every stream routed.
 */
import { h2cStreamRouter, http2Panel } from '../../panels/http2/index.ts';
import { netPanelWith } from '../../panels/net/index.ts';
import type { AnyPanelFactory } from '../../src/panel/contract.ts';

/** The engine panels by name (`panel.engine` of the worker panel). */
export const enginePanels: Readonly<Record<'net' | 'http2', AnyPanelFactory>> = {
  net: netPanelWith(h2cStreamRouter),
  http2: http2Panel,
};
