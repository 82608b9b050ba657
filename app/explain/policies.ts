/**
 * The `policies:` part of a routing explanation (issue 42 item 5): which rule would act on the
 * request and the client address, as `switchboard route` and the dashboard's explainer say it.
 * The rules are evaluated by `PolicySet.explain` (src/policy/explain.ts), without side effects:
 * no rate-limit token and no in-flight slot is taken.
 *
 * 1. The points a connection reaches, in order: `connection` (the connection's client: the
 *    PROXY source or the peer, never a forwarded header), `handshake` (TLS listeners only),
 *    then `request` and `routed` (HTTP only: a TLS passthrough connection has no request;
 *    `routed` only when the book found a route).
 * 2. Each selected rule is one entry: `fires` (close, or an answer with its status and
 *    `Location`), `applies` (a counting rule: fires only over its limit) or `passes`.
 * 3. The first rule that fires ends the explanation: the points after it never run.
 * 4. `openPolicies` compiles and starts a config's rules for the CLI (list files read), on
 *    counters of their own; the dashboard asks the running set (asking takes nothing).
 */
import type { ListenerConfig } from '../../src/config/schema.ts';
import type { HandshakeFacts, PointContext, PolicyPoint } from '../../src/contracts/policy.ts';
import type { Candidates, Request } from '../../src/contracts/types.ts';
import type { LoadedConfig } from '../../src/panel/contract.ts';
import { compilePolicies, type PolicySet } from '../../src/policy/index.ts';

/** One rule the request would meet (JSON: `switchboard route --json`, `POST /explain`). */
export interface ExplainedRule {
  readonly rule: string;
  readonly policy: string;
  readonly point: PolicyPoint;
  readonly outcome: 'fires' | 'applies' | 'passes';
  /** When it fires: close, or answer. */
  readonly action: 'close' | 'answer' | undefined;
  /** The answer's status, when it answers. */
  readonly status: number | undefined;
  /** The answer's `Location` (a redirect). */
  readonly location: string | undefined;
}

/** The connection's facts as the `connection` and `handshake` points see them (step 1). */
function connectionFacts(r: Request): HandshakeFacts {
  return {
    clientIp: r.sessionIp ?? r.clientIp,
    clientPort: r.clientFrom === 'header' ? 0 : r.clientPort,
    sessionIp: r.sessionIp ?? r.clientIp,
    peerIp: r.peerIp,
    localIp: r.localIp,
    localPort: r.localPort,
    vip: r.vip,
    secure: r.secure,
    trustedClient: r.clientFrom === 'proxy',
    listener: r.listener,
    sni: r.sni,
    alpn: r.alpn,
    tls: r.tls,
  };
}

/** Steps 1–3: the rules `request` on `listener` would meet, in order. */
export function explainPolicies(
  set: PolicySet,
  request: Request,
  candidates: Candidates | undefined,
  listener: Pick<ListenerConfig, 'tls'>,
): ExplainedRule[] {
  const out: ExplainedRule[] = [];
  const facts = connectionFacts(request);
  const steps: [PolicyPoint, PointContext][] = [['connection', { connection: facts }]];
  if (listener.tls !== 'off') steps.push(['handshake', { connection: facts }]);
  if (request.protocol !== 'tls') {
    steps.push(['request', { connection: request, request }]);
    if (candidates !== undefined) {
      const { product, cluster } = candidates;
      steps.push(['routed', { connection: request, request, product, cluster }]);
    }
  }
  for (const [point, ctx] of steps) {
    for (const e of set.explain(point, ctx)) {
      if (e.outcome !== 'fires') {
        out.push({ ...e, action: undefined, status: undefined, location: undefined });
        continue;
      }
      const v = e.verdict;
      const answer = v.action === 'answer' ? v.answer : undefined;
      const location = answer?.headers.find(([n]) => n.toLowerCase() === 'location')?.[1];
      out.push({
        rule: e.rule,
        policy: e.policy,
        point,
        outcome: 'fires',
        action: v.action,
        status: answer?.status,
        location,
      });
      return out;
    }
  }
  return out;
}

/** One line per rule (`switchboard route` text). */
export function formatPolicies(rules: readonly ExplainedRule[]): string[] {
  return rules.map((r) => {
    const head = `policy: ${r.rule} (${r.policy}) at ${r.point}`;
    if (r.outcome === 'applies') return `${head}: applies, fires only over its limit`;
    if (r.outcome === 'passes') return `${head}: passes`;
    if (r.action === 'close') return `${head}: fires, close`;
    return `${head}: fires, answer ${r.status}${r.location === undefined ? '' : ` Location ${r.location}`}`;
  });
}

/** Step 4: the rules of `loaded`, compiled and started (list files read); `close()` when done. */
export async function openPolicies(loaded: Pick<LoadedConfig, 'config' | 'policies' | 'dir'>): Promise<PolicySet> {
  const set = compilePolicies(loaded.config.policies, {
    resolve: (use) => loaded.policies.get(use),
    configDir: loaded.dir,
  });
  await set.start();
  return set;
}
