/** Every primitive the condition language knows, by name (re-exports and one merged table). */
import { headerPrimitives } from './header.ts';
import { hostPrimitives } from './host.ts';
import { listenerPrimitives } from './listener.ts';
import { netPrimitives } from './net.ts';
import { pathPrimitives } from './path.ts';
import { queryPrimitives } from './query.ts';
import { requestPrimitives } from './request.ts';
import { timePrimitives } from './time.ts';
import { tlsPrimitives } from './tls.ts';
import type { PrimitiveTable } from './types.ts';

export type { ArgKind, BuildContext, Condition, Primitive, PrimitiveTable } from './types.ts';
export { UNAVAILABLE } from './unavailable.ts';

/** The merged primitive table. */
export const PRIMITIVES: PrimitiveTable = Object.freeze({
  ...hostPrimitives,
  ...pathPrimitives,
  ...queryPrimitives,
  ...headerPrimitives,
  ...requestPrimitives,
  ...netPrimitives,
  ...listenerPrimitives,
  ...tlsPrimitives,
  ...timePrimitives,
});
