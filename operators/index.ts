/** The built-in operators by config name. */
import type { OperatorFactory } from '../src/contracts/plugin.ts';
import { bfe } from './bfe/index.ts';
import { consistentHash } from './consistent-hash.ts';
import { ewma } from './ewma.ts';
import { leastConnections } from './least-connections.ts';
import { p2c } from './p2c.ts';
import { random } from './random.ts';
import { roundRobin } from './round-robin.ts';

/** Every built-in operator factory, keyed by its `name`. */
export const builtinOperators: Record<string, OperatorFactory> = {
  bfe,
  random,
  'round-robin': roundRobin,
  'least-connections': leastConnections,
  'consistent-hash': consistentHash,
  p2c,
  ewma,
};
