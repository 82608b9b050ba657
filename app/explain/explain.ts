/**
 * One routing explanation for every address book: what `switchboard route` prints (text and
 * `--json`) and what the dashboard's explain form shows. The Request is built the way the data
 * plane builds it — the Host value parsed by the peek's own `parseAuthority` (port split off,
 * lower-cased, trailing dot removed), the path normalised with the listener's
 * `pathNormalization`, the client address read from a forwarded header on `clientIpFrom: header`
 * listeners whose trusted sources include the connection address — then the book's
 * `findAddresses` and the operator's `findJack` (attempt 1) are asked, as `src/routing/route.ts` and the
 * upstream pipeline do:
 *
 *   ExplainInput ──► Request ──► book.findAddresses ──► (book.explain: product/rule steps)
 *                                     │ undefined → no route + reason
 *                                     ▼
 *                               operator.findJack(attempt 1) ──► chosen backend | refusal
 *
 * and the `policies:` rules the request and its client address would meet at each point
 * (policies.ts: evaluated without side effects; the first that fires ends the list).
 *
 * Backend state (live.ts): with `live`, the operator is a fresh instance of the configured one
 * over the running router's registry (read-only, registry-view.ts), so attempt 1 skips what the
 * data plane skips now (unhealthy, drained, disabled, weight 0) and weighs what it weighs
 * (overrides, slow start); each candidate says why (backends.ts), and `allHealthy` tells what
 * the same operator would pick with every backend healthy at its configured weight, when that
 * differs. Without `live` (offline `switchboard route`) every backend is assumed healthy at its
 * configured weight, and the answer says so. A fresh operator starts its balancing at its first
 * step (the live one is never advanced): `chosen` is one pick; real traffic spreads over every
 * backend that `takesTraffic`.
 */
import { isIP } from 'node:net';
import { SwitchboardError } from '../../src/base/errors.ts';
import type { ListenerConfig } from '../../src/config/schema.ts';
import {
  type AddressBook,
  type Candidates,
  isRefusal,
  type Jack,
  type Operator,
  type Refusal,
  type Request,
} from '../../src/contracts/types.ts';
import { parseAuthority } from '../../src/peek/http1-host.ts';
import { normalizePath } from '../../src/peek/path.ts';
import type { PolicySet } from '../../src/policy/index.ts';
import { type ClientAddressing, clientAddressing, forwardedClientIp } from '../../src/request/client-ip.ts';
import { createRequest } from '../../src/request/request.ts';
import { pickFirst } from '../../src/upstream/attempts.ts';
import { type ExplainedCluster, explainCluster, type LiveBackends } from './backends.ts';
import { bookSteps, type ExplainedRuleMatch, ruleOf, stepsOf } from './book-steps.ts';
import { type ExplainedRule, explainPolicies } from './policies.ts';

export type { ExplainedBackend, ExplainedCluster } from './backends.ts';

/** The request to explain. `host` (HTTP) or `sni` (TLS passthrough) or both (terminated TLS). */
export interface ExplainInput {
  /** Host header value as a client sends it, port allowed (`www.example.test:8080`). */
  readonly host?: string | undefined;
  /** Request target (path and query); default `/`. */
  readonly path?: string | undefined;
  readonly method?: string | undefined;
  readonly headers?: readonly (readonly [string, string])[] | undefined;
  /** Connection (or PROXY source) address; default 127.0.0.1. */
  readonly clientIp?: string | undefined;
  readonly sni?: string | undefined;
  readonly alpn?: readonly string[] | undefined;
  /** PROXY destination address. */
  readonly vip?: string | undefined;
  /** Listener whose pathNormalization and client addressing apply; default the first. */
  readonly listener?: string | undefined;
}

/** What `explainRoute` asks. */
export interface ExplainEngine {
  readonly book: AddressBook;
  readonly operator: Operator;
  readonly listeners: readonly ListenerConfig[];
  /** The `policies:` rules to explain (none: no policy lines). */
  readonly policies?: PolicySet | undefined;
  /** The running router's backend state (live.ts); absent: every backend assumed healthy at its configured weight. */
  readonly live?: LiveEngine | undefined;
}

/** What a live explanation reads besides the book: the registry `operator` reads, and the baseline. */
export interface LiveEngine extends LiveBackends {
  /** The same operator over a registry where every backend is healthy at its configured weight. */
  readonly allHealthy: Operator;
}

/** A bad input (usage error, `SWB_ERR_USAGE`): `switchboard route` exits 2, the dashboard answers 400. */
export class ExplainInputError extends SwitchboardError {
  override readonly name = 'ExplainInputError';
  constructor(message: string) {
    super('SWB_ERR_USAGE', message);
  }
}

/** The explanation: the same shape whatever the address book. */
export interface RouteExplanation {
  readonly request: {
    readonly protocol: 'http1' | 'tls';
    readonly host: string;
    readonly port: number | undefined;
    readonly path: string | undefined;
    readonly method: string | undefined;
    readonly sni: string | undefined;
    readonly clientIp: string;
    readonly vip: string | undefined;
    readonly listener: string;
  };
  readonly routed: boolean;
  readonly product: { readonly name: string; readonly how: string | undefined } | undefined;
  /** The rule that matched: `where` is its config path (or the book's rule id). */
  readonly rule: ExplainedRuleMatch | undefined;
  /** The book's own steps, one line each (e.g. "basic rules: no basic rule for this host"). */
  readonly steps: readonly string[];
  readonly cluster: ExplainedCluster | undefined;
  /** The backend the operator picks for attempt 1. */
  readonly chosen:
    | { readonly backend: string; readonly name: string; readonly subcluster: string; readonly attempt: 1 }
    | undefined;
  /** Why there is no route, or why the operator refused (`no_backend`, `blackhole`). */
  readonly reason: string | undefined;
  /** The `policies:` rules the request would meet, in order; the last one `fires` when one would. */
  readonly policies: readonly ExplainedRule[];
  /**
   * Whose backend state the answer reflects: `live` (the running router's health, drain and
   * disable, weight overrides, slow start) or `assumed` (offline: every backend healthy at its
   * configured weight).
   */
  readonly backendState: 'live' | 'assumed';
  /**
   * Live only, when the answer differs from the all-healthy one: the backend attempt 1 would
   * get with every backend healthy at its configured weight (undefined: refused), and a note.
   */
  readonly allHealthy: { readonly chosen: string | undefined; readonly note: string } | undefined;
}

/** The listener `name` names, else the first. */
export function pickListener(listeners: readonly ListenerConfig[], name: string | undefined): ListenerConfig {
  if (listeners.length === 0) throw new ExplainInputError('the config has no listener');
  if (name === undefined) return listeners[0]!;
  const found = listeners.find((l) => l.name === name);
  if (found === undefined) {
    throw new ExplainInputError(`listener ${name}: no such listener (have ${listeners.map((l) => l.name).join(', ')})`);
  }
  return found;
}

function valuesOf(headers: readonly (readonly [string, string])[]) {
  return (name: string) => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
}

function usage<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new ExplainInputError(`${what}: ${(e as Error).message.replace(/^http1: /, '')}`);
  }
}

/** The Request the data plane would build for `input` on `listener`. Throws ExplainInputError. */
export function requestFor(input: ExplainInput, listener: ListenerConfig): Request {
  const sni = input.sni === undefined ? undefined : input.sni.toLowerCase().replace(/\.$/, '');
  if (input.host === undefined && sni === undefined) throw new ExplainInputError('give a host, an SNI or both');
  const clientIp = input.clientIp ?? '127.0.0.1';
  if (isIP(clientIp) === 0) throw new ExplainInputError(`client ${JSON.stringify(clientIp)}: expected an IP address`);
  if (input.vip !== undefined && isIP(input.vip) === 0) {
    throw new ExplainInputError(`vip ${JSON.stringify(input.vip)}: expected an IP address`);
  }
  const base = { clientIp, clientPort: 0, localIp: '127.0.0.1', localPort: 0, vip: input.vip, listener: listener.name };
  const alpn = input.alpn ?? [];
  if (input.host === undefined) {
    // TLS passthrough: routed by the ClientHello's SNI alone.
    return createRequest({ ...base, protocol: 'tls', host: sni, sni, alpn, secure: true });
  }
  const rawHost = input.host;
  const authority = usage(`host ${JSON.stringify(rawHost)}`, () => parseAuthority(rawHost, 'Host'));
  const target = input.path ?? '/';
  const q = target.indexOf('?');
  const path = usage(`path ${JSON.stringify(target)}`, () =>
    normalizePath(q === -1 ? target : target.slice(0, q), listener.pathNormalization),
  );
  const headers: (readonly [string, string])[] = [['Host', rawHost], ...(input.headers ?? [])];
  const addressing: ClientAddressing = clientAddressing(listener);
  const forwarded = forwardedClientIp(addressing, clientIp, valuesOf(headers));
  return createRequest({
    ...base,
    clientIp: forwarded ?? clientIp,
    sessionIp: clientIp,
    peerIp: clientIp,
    trustedClient: forwarded !== undefined,
    clientFrom: forwarded === undefined ? 'connection' : 'header',
    protocol: 'http1',
    host: authority.host,
    port: authority.port,
    path,
    target,
    query: q === -1 ? '' : target.slice(q + 1),
    method: (input.method ?? 'GET').toUpperCase(),
    headers,
    // Both host and SNI: HTTP on a TLS-terminating listener.
    ...(sni === undefined ? {} : { secure: true, sni, alpn }),
  });
}

/** Explains how `engine` routes `input`. Throws ExplainInputError on a bad input. */
export function explainRoute(engine: ExplainEngine, input: ExplainInput): RouteExplanation {
  const listener = pickListener(engine.listeners, input.listener);
  const request = requestFor(input, listener);
  const shown: RouteExplanation['request'] = {
    protocol: request.protocol === 'tls' ? 'tls' : 'http1',
    host: request.host,
    port: request.port,
    path: request.path,
    method: request.method,
    sni: request.sni,
    clientIp: request.clientIp,
    vip: request.vip,
    listener: listener.name,
  };
  const candidates = engine.book.findAddresses(request);
  const policies = engine.policies === undefined ? [] : explainPolicies(engine.policies, request, candidates, listener);
  const steps = bookSteps(engine.book, request);
  const p = steps?.product;
  const how = p === undefined ? undefined : `by ${p.via} ${p.pattern}${p.tag ? `, tag ${p.tag}` : ''} at ${p.where}`;
  if (candidates === undefined) {
    return {
      request: shown,
      routed: false,
      product: p === undefined ? undefined : { name: p.name, how },
      rule: undefined,
      steps: stepsOf(steps),
      cluster: undefined,
      chosen: undefined,
      reason: steps?.reason ?? 'the address book found no candidates (findAddresses returned nothing)',
      policies,
      backendState: engine.live === undefined ? 'assumed' : 'live',
      allHealthy: undefined,
    };
  }
  const jack = pickFirst(request, candidates, engine.operator);
  const refused = isRefusal(jack) ? jack.refused : undefined;
  const cluster = explainCluster(candidates, engine.live);
  const idle = refused === 'no_backend' && engine.live !== undefined ? ' (no candidate takes traffic now)' : '';
  return {
    request: shown,
    routed: refused === undefined,
    product: { name: candidates.product, how },
    rule: ruleOf(steps, candidates),
    steps: stepsOf(steps),
    cluster,
    chosen: isRefusal(jack)
      ? undefined
      : { backend: jack.backend.id, name: jack.backend.name, subcluster: jack.subcluster, attempt: 1 },
    reason: refused === undefined ? undefined : `the operator refused: ${refused}${idle}`,
    policies,
    backendState: engine.live === undefined ? 'assumed' : 'live',
    allHealthy: allHealthyOf(engine.live, request, candidates, jack, cluster),
  };
}

/** The all-healthy answer when it differs from the live one (`RouteExplanation.allHealthy`). */
function allHealthyOf(
  live: LiveEngine | undefined,
  request: Request,
  candidates: Candidates,
  jack: Jack | Refusal,
  cluster: ExplainedCluster,
): RouteExplanation['allHealthy'] {
  if (live === undefined) return undefined;
  const base = pickFirst(request, candidates, live.allHealthy);
  const chosen = isRefusal(base) ? undefined : base.backend.id;
  if (chosen === (isRefusal(jack) ? undefined : jack.backend.id)) return undefined;
  const head = 'with every backend healthy at its configured weight';
  if (isRefusal(base)) return { chosen, note: `${head} the operator would refuse (${base.refused})` };
  const why = cluster.subclusters.flatMap((s) => s.backends).find((b) => b.id === chosen)?.why;
  return { chosen, note: `${head}, attempt 1 would go to ${chosen}${why === undefined ? '' : ` (now ${why})`}` };
}
