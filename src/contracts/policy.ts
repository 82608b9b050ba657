/**
 * The policy contract (issue 42), the fourth plugin kind beside panel, address book and operator:
 * whether a connection or request may go on, decided at BFE's callback points.
 *
 *   accept ─► connection ─► handshake ─► request ─► routed ─► … ─► finish
 *   (HandleAccept)   (HandleHandshake) (BeforeLocation) (FoundProduct)  (RequestFinish/Finish)
 *
 * 1. A factory (`name`, `options` schema, `points`, pure `create`) is registered by name or
 *    loaded by module path (`use: ./my-policy.ts`), as books and operators are.
 * 2. Its instance implements any of the points. Each gets what is known there (the `*Context`
 *    types) and returns a verdict, or `undefined` to let it through holding nothing.
 * 3. A verdict lets through, closes, or answers in the router's own words; a policy never
 *    rewrites forwarded bytes.
 * 4. A verdict that counts something (an in-flight slot) carries a `Hold`; the caller releases
 *    it when the request, stream or connection ends, on every end path, and a second release is
 *    a no-op, so each slot is given back exactly once.
 * 5. `finish` observes an end; it decides nothing.
 */
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Request } from './types.ts';

/** The points a rule can run at, in the order a connection reaches them. */
export const POLICY_POINTS = ['connection', 'handshake', 'request', 'routed'] as const;

/** A point a rule runs at (`finish` is observe-only and not a rule's point). */
export type PolicyPoint = (typeof POLICY_POINTS)[number];

/**
 * What the `connection` point knows (after PROXY in): the client and session addresses, the
 * listener and whether it is TLS. From the request point on, the `Request` itself is this.
 */
export type ConnectionFacts = Pick<
  Request,
  | 'clientIp'
  | 'clientPort'
  | 'sessionIp'
  | 'peerIp'
  | 'localIp'
  | 'localPort'
  | 'vip'
  | 'secure'
  | 'trustedClient'
  | 'listener'
>;

/** What the `handshake` point knows besides: SNI, ALPN and TLS facts (passthrough or termination). */
export type HandshakeFacts = ConnectionFacts & Pick<Request, 'sni' | 'alpn' | 'tls'>;

/** The `connection` point: a connection accepted, its client address known (BFE HandleAccept). */
export interface ConnectionContext {
  readonly connection: ConnectionFacts;
}

/** The `handshake` point: a TLS ClientHello seen or a handshake done (BFE HandleHandshake). */
export interface HandshakeContext {
  readonly connection: HandshakeFacts;
}

/** The `request` point: a request head peeked, before the address book (BFE HandleBeforeLocation). */
export interface RequestContext extends HandshakeContext {
  readonly request: Request;
}

/** The `routed` point: product and cluster known (BFE HandleFoundProduct / HandleAfterLocation). */
export interface RoutedContext extends RequestContext {
  readonly product: string;
  readonly cluster: string;
}

/** Any point's context, for a policy that runs at several: what a later point adds is optional. */
export interface PointContext {
  readonly connection: ConnectionFacts;
  readonly request?: Request;
  readonly product?: string;
  readonly cluster?: string;
}

/** What ended, for `finish`. */
export interface FinishContext extends PointContext {
  /** A request (HTTP/1 per request), a stream (HTTP/2) or a whole connection. */
  readonly ended: 'request' | 'stream' | 'connection';
}

/** Something counted that must be given back once (an in-flight slot). */
export interface Hold {
  /** Gives the slot back; later calls do nothing. */
  release(): void;
}

/** An answer in the router's own words: a status, headers and a small body (a redirect is one). */
export interface PolicyAnswer {
  readonly status: number;
  /** Header lines in order, names as they are written on the wire. */
  readonly headers: readonly (readonly [name: string, value: string])[];
  readonly body: Uint8Array;
}

/** What a point decides: let through (maybe holding a slot), close, or answer. */
export type PolicyVerdict =
  | { readonly action: 'pass'; readonly hold?: Hold }
  | { readonly action: 'close' }
  | { readonly action: 'answer'; readonly answer: PolicyAnswer };

/** What a rule's `action:` says a refusing policy does: close, or answer. */
export type RuleAction = { readonly action: 'close' } | { readonly action: 'answer'; readonly answer: PolicyAnswer };

/** A counter of events over time per key (GCRA): `take` is 0 when allowed, else the milliseconds to wait. */
export interface RateCounter {
  take(key: string, now: number): number;
  /** Keys held now (bounded by the counter's `maxKeys`). */
  readonly size: number;
  /**
   * True while a fleet counter that fails closed cannot reach the shared count (issue 43): its
   * refusals mean "unavailable" (503), not "too many". Absent on local counters.
   */
  readonly unavailable?: boolean;
}

/** A counter of things in progress per key: a `Hold` when under `max`, undefined when at it. */
export interface ConcurrencyCounter {
  acquire(key: string): Hold | undefined;
  /** Keys with at least one slot held. */
  readonly size: number;
  /** As `RateCounter.unavailable`: a refusal while the shared count is out of reach and the rule fails closed. */
  readonly unavailable?: boolean;
}

/**
 * Where a counting rule counts (issue 43): in this router (`local`, the default) or summed
 * across the fleet through Redis (`fleet`), and what a fleet rule does while Redis is out of
 * reach: count locally with its share of the limit (`open`) or refuse (`closed`).
 */
export interface CounterScope {
  readonly scope: 'local' | 'fleet';
  readonly failMode: 'open' | 'closed';
}

/** A rate: `rate` events per `per` milliseconds, `burst` at once. */
export interface RateSpec {
  readonly rate: number;
  readonly per: number;
  readonly burst: number;
  /** The most keys remembered; the least recently used is forgotten first. */
  readonly maxKeys: number;
}

/**
 * Where a rule's counters come from. They are kept by rule identity (name + a hash of its
 * definition), so a reload that leaves a rule unchanged hands back the same counter, never a
 * fresh burst. The local counters count in one thread; the worker panel can back the same
 * interface with shared memory; a `scope: fleet` rule gets counters summed across the fleet
 * (app/fleet/limits-*.ts), whose decisions are synchronous too (never a wait on Redis).
 */
export interface PolicyCounters {
  /** `scope` omitted or `local`: this router's (or process's) count; `fleet`: the fleet's (issue 43). */
  rate(spec: RateSpec, scope?: CounterScope): RateCounter;
  concurrency(max: number, scope?: CounterScope): ConcurrencyCounter;
}

/** What `create` gets besides its options. */
export interface PolicyCreateContext {
  /** The rule's name and its point. */
  readonly rule: string;
  readonly point: PolicyPoint;
  /** The rule's `action:` (refusing policies only): how to refuse; undefined = the policy's default. */
  readonly action: RuleAction | undefined;
  /** Directory of the config file: relative paths in options resolve against it. */
  readonly configDir: string;
  /** The config path of the options, for error messages (`policies[2].options`). */
  readonly where: string;
  readonly counters: PolicyCounters;
  /** The clock of counters, in milliseconds (monotonic; tests inject one). */
  readonly now: () => number;
  readonly logger?: Logger;
}

/** A policy instance: any of the points, and an optional lifecycle (load a list file, watch it). */
export interface PolicyInstance {
  connection?(ctx: ConnectionContext): PolicyVerdict | undefined;
  handshake?(ctx: HandshakeContext): PolicyVerdict | undefined;
  request?(ctx: RequestContext): PolicyVerdict | undefined;
  routed?(ctx: RoutedContext): PolicyVerdict | undefined;
  finish?(ctx: FinishContext): void;
  /** I/O after `create` (reading a list file); the set is usable once every start resolved. */
  start?(): Promise<void>;
  close?(): Promise<void>;
}

/** A policy factory, registered once by name. */
export interface PolicyFactory<O = unknown> {
  readonly name: string;
  /** Schema of `options:`; omitted = no options allowed. */
  readonly options?: z.ZodType<O>;
  /** The points it can run at; a rule without `point:` runs at the earliest one its needs allow. */
  readonly points: readonly PolicyPoint[];
  /**
   * True for a policy that refuses (block, rate-limit, in-flight): the rule's `action:` says how.
   * A policy that answers on its own (respond, redirect) leaves it unset, and `action:` is refused.
   */
  readonly refuses?: boolean;
  /** The earliest point its options can be served at (a rate keyed by a header needs `request`). */
  needs?(options: O): PolicyPoint;
  create(options: O, context: PolicyCreateContext): PolicyInstance;
}

// biome-ignore lint/suspicious/noExplicitAny: factories are stored heterogeneously by name
export type AnyPolicyFactory = PolicyFactory<any>;
