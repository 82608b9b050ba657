/**
 * The `http2` panel: terminates HTTP/2 and routes every stream (see README.md). It takes no
 * options; what it cannot honour is refused at config load (validate.ts).
 */
import type { DescriptorBudget, PanelValidator } from '../../src/panel/capabilities.ts';
import type { PanelFactory } from '../../src/panel/contract.ts';
import { http2Panel as server } from './server.ts';

export { h2cStreamRouter } from './server.ts';

import { http2Refusals } from './validate.ts';

export type { Http2Panel } from './server.ts';

/** The `http2` panel factory. */
export const http2Panel = {
  name: 'http2',
  create: server.create,
  validate: (config) => http2Refusals(config),
  // One per client connection: upstreams are pooled per backend, not per client (docs/configuration.md "Limits").
  descriptorsPerConnection: () => 1,
} satisfies PanelFactory & PanelValidator & DescriptorBudget;
