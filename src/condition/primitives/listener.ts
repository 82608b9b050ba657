/**
 * Ours: the listener that accepted the connection (`listeners[].name`), so one rule can hold for
 * the public listener and not the internal one. Known from the `connection` point on.
 */
import { listMatcher, str } from './matchers.ts';
import { type Condition, type PrimitiveTable, params } from './types.ts';

/** Listener primitives. */
export const listenerPrimitives: PrimitiveTable = {
  ses_listener_in: {
    params: params('S:names'),
    build: (a): Condition => {
      // Listener names are case-sensitive, as in the config.
      const match = listMatcher('in', str(a, 0), false);
      return (r) => match(r.listener);
    },
  },
};
