/**
 * `switchboard/plugin`: the public entry for address books, operators and policies written
 * outside the repository (docs/plugins.md). Everything a plugin may import from Switchboard is
 * re-exported here, and only what is here is covered by semver (README.md in this folder): a
 * path into the package (`switchboard/src/…`) is private and may change in any release.
 */

// The schema library the config is validated with: a plugin's `options` schema is this zod.
export { z } from 'zod';
export {
  type CompileOptions as RoutingTableCompileOptions,
  compileRoutingTable,
  compileRoutingTableSliced,
} from '../address-books/bfe/compile.ts';
export { type RoutingTable, routingTableSchema } from '../address-books/bfe/routing-table.ts';
export type { Snapshot as RoutingSnapshot } from '../address-books/bfe/snapshot.ts';
// Books: a snapshot swapped whole, the bfe routing table compiled, a source file watched and kept.
export { LastGoodFile, lastGoodOption } from '../address-books/lib/last-good.ts';
export { type BookView, SnapshotBook } from '../address-books/lib/snapshot-book.ts';
// Operators: GSLB, health, drain, weight overrides and slow start around an algorithm of one pool.
export { memo, type PoolPick, poolOperator } from '../operators/lib/operator.ts';
export { eligible, type Pool, weightOf } from '../operators/lib/pool.ts';
// Errors, conditions, addresses, file watch: the core's own helpers.
export { type ErrorCode, isSwitchboardError, SwitchboardError } from '../src/base/errors.ts';
export { type FileWatcher, watchFiles } from '../src/base/file-watch.ts';
export {
  type CompileOptions as ConditionCompileOptions,
  type Condition,
  checkNamedConditions,
  compileCondition,
} from '../src/condition/index.ts';
export { type HostPort, parseHostPort } from '../src/config/address.ts';
export { DEFAULT_POLICY } from '../src/config/cluster.ts';
// The contracts: what the router hands a plugin and what it expects back.
export type { AdminMode, BackendRegistry, BackendState } from '../src/contracts/backend-registry.ts';
export type {
  AddressBookFactory,
  Factory,
  OperatorFactory,
  OperatorInstance,
  PluginContext,
} from '../src/contracts/plugin.ts';
export {
  type AnyPolicyFactory,
  type ConcurrencyCounter,
  type ConnectionContext,
  type CounterScope,
  type FinishContext,
  type HandshakeContext,
  type Hold,
  POLICY_POINTS,
  type PointContext,
  type PolicyAnswer,
  type PolicyCounters,
  type PolicyCreateContext,
  type PolicyFactory,
  type PolicyInstance,
  type PolicyPoint,
  type PolicyVerdict,
  type RateCounter,
  type RateSpec,
  type RequestContext,
  type RoutedContext,
  type RuleAction,
} from '../src/contracts/policy.ts';
export {
  type AddressBook,
  type Attempt,
  type Backend,
  type BackendEntry,
  type BackendLister,
  BLACKHOLE,
  type Candidates,
  type ClientFrom,
  type ClusterPolicy,
  type DescribedRoutes,
  type HealthCheckPolicy,
  isRefusal,
  type Jack,
  type Operator,
  type Protocol,
  type Refusal,
  type Request,
  type RoutesOrigin,
  type RoutingTableSource,
  type Startable,
  type SubCluster,
  type TlsInfo,
} from '../src/contracts/types.ts';
