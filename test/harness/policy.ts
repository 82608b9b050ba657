/**
 * The policy rule set under test: rules parsed by the `policies:` schema and compiled with the
 * built-in policies, a fake clock, and the contexts of each point built from a fake request.
 */

import { builtinPolicies } from '../../policies/index.ts';
import type { ConnectionContext, RequestContext, RoutedContext } from '../../src/contracts/policy.ts';
import type { Request } from '../../src/contracts/types.ts';
import { type CompileOptions, compilePolicies, type PolicySet, policiesSchema } from '../../src/policy/index.ts';
import { type FakeRequestInit, fakeRequest } from '../unit/condition-fixtures.ts';

/** A clock tests move by hand (milliseconds). */
export interface FakeClock {
  now: () => number;
  advance(ms: number): void;
}

/** A clock at `start` that moves only when told. */
export function fakeClock(start = 1_000_000): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
  };
}

/** Parses `rules` (plain config values) and compiles them with the built-ins. */
export function compileRules(rules: unknown, options: Partial<CompileOptions> = {}): PolicySet {
  return compilePolicies(policiesSchema.parse(rules), {
    resolve: (use) => builtinPolicies[use],
    configDir: options.configDir ?? process.cwd(),
    ...options,
  });
}

/** The `connection` context of a request's connection. */
export function atConnection(init: FakeRequestInit = {}): ConnectionContext {
  return { connection: fakeRequest(init) };
}

/** The `request` context of a fake request. */
export function atRequest(init: FakeRequestInit = {}): RequestContext {
  const request: Request = fakeRequest(init);
  return { connection: request, request };
}

/** The `routed` context of a fake request routed to `product`/`cluster`. */
export function atRouted(init: FakeRequestInit, product: string, cluster: string): RoutedContext {
  return { ...atRequest(init), product, cluster };
}
