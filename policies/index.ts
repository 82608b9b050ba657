/** The built-in policies by config name (`use: block`). */
import type { AnyPolicyFactory } from '../src/contracts/policy.ts';
import { block } from './block.ts';
import { inFlight } from './in-flight.ts';
import { rateLimit } from './rate-limit.ts';
import { redirect } from './redirect.ts';
import { respond } from './respond.ts';

/** Every built-in policy factory, keyed by its `name`. */
export const builtinPolicies: Readonly<Record<string, AnyPolicyFactory>> = {
  block,
  respond,
  redirect,
  'rate-limit': rateLimit,
  'in-flight': inFlight,
};
