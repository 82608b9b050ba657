/**
 * `switchboard route`: the routing decision for a request, step by step, without sending
 * traffic. It walks the same compiled parts as `Snapshot.findAddresses`, recording each step.
 */
import type { Candidates, Request } from '../../src/contracts/types.ts';
import type { Snapshot } from './snapshot.ts';

/** How the product was found. */
export interface ProductStep {
  readonly name: string;
  readonly via: 'host' | 'vip' | 'default';
  readonly pattern: string;
  readonly tag: string | undefined;
  /** Config path of the host, VIP or defaultProduct entry. */
  readonly where: string;
}

/** What the basic rule tree said. */
export interface BasicStep {
  readonly matched: boolean;
  readonly hostPattern: string | undefined;
  readonly pathPattern: string | undefined;
  readonly rule: string | undefined;
  readonly cluster: string | undefined;
  readonly note: string;
}

/** What the advanced rules said. */
export interface AdvancedStep {
  readonly evaluated: number;
  readonly matched:
    | { readonly index: number; readonly rule: string; readonly cond: string; readonly cluster: string }
    | undefined;
}

/** A plain description of one routing decision. */
export interface Explanation {
  readonly request: { readonly host: string; readonly path: string | undefined; readonly vip: string | undefined };
  readonly routed: boolean;
  readonly product: ProductStep | undefined;
  readonly basic: BasicStep | undefined;
  readonly advanced: AdvancedStep | undefined;
  readonly candidates: Candidates | undefined;
  /** Why nothing matched, when `routed` is false. */
  readonly reason: string | undefined;
}

function basicStep(snapshot: Snapshot, product: string, req: Request): BasicStep | undefined {
  const tree = snapshot.products.get(product)?.basic;
  if (tree === undefined) return undefined;
  const node = tree.lookupHost(req.host);
  if (node === undefined) {
    return {
      matched: false,
      hostPattern: undefined,
      pathPattern: undefined,
      rule: undefined,
      cluster: undefined,
      note: 'no basic rule for this host',
    };
  }
  const t = node.paths.lookup(req.path);
  if (t === undefined) {
    const note = `host ${node.pattern} has no path matching ${req.path ?? '(no path)'}; no fallback to other hosts`;
    return {
      matched: false,
      hostPattern: node.pattern,
      pathPattern: undefined,
      rule: undefined,
      cluster: undefined,
      note,
    };
  }
  const note = t.candidates === undefined ? 'ADVANCED_MODE: continue with the advanced rules' : 'matched';
  return { matched: true, hostPattern: node.pattern, pathPattern: t.pattern, rule: t.rule, cluster: t.cluster, note };
}

/** Explains how `snapshot` routes `req` (or why it does not). */
export function explain(snapshot: Snapshot, req: Request): Explanation {
  const request = { host: req.host, path: req.path, vip: req.vip };
  const none = { routed: false, basic: undefined, advanced: undefined, candidates: undefined };
  const p = snapshot.productOf(req);
  if (p === undefined) {
    return {
      request,
      ...none,
      product: undefined,
      reason: `no product: host ${JSON.stringify(req.host)} is not in the host table, no VIP matched and no defaultProduct is set`,
    };
  }
  const product: ProductStep = { name: p.product, via: p.via, pattern: p.pattern, tag: p.tag, where: p.where };
  const basic = basicStep(snapshot, p.product, req);
  const routes = snapshot.products.get(p.product);
  const hit = basic?.rule === undefined ? undefined : routes?.basic?.lookup(req.host, req.path);
  if (hit?.candidates !== undefined)
    return { request, ...none, routed: true, product, basic, candidates: hit.candidates, reason: undefined };
  const rules = routes?.rules ?? [];
  let evaluated = 0;
  for (const r of rules) {
    evaluated++;
    if (r.match(req)) {
      const matched = { index: r.index, rule: r.rule, cond: r.cond, cluster: r.cluster };
      return {
        request,
        ...none,
        routed: true,
        product,
        basic,
        advanced: { evaluated, matched },
        candidates: r.candidates,
        reason: undefined,
      };
    }
  }
  const reason =
    rules.length === 0
      ? `product ${p.product} has no advanced rules`
      : `none of the ${rules.length} advanced rules of product ${p.product} matched`;
  return { request, ...none, product, basic, advanced: { evaluated, matched: undefined }, reason };
}

/** Human-readable lines for the CLI. */
export function formatExplanation(e: Explanation): string {
  const lines = [
    `request: host ${e.request.host || '(none)'} path ${e.request.path ?? '(none)'}${e.request.vip ? ` vip ${e.request.vip}` : ''}`,
  ];
  if (e.product)
    lines.push(
      `product: ${e.product.name} (by ${e.product.via} ${e.product.pattern}${e.product.tag ? `, tag ${e.product.tag}` : ''} at ${e.product.where})`,
    );
  if (e.basic) {
    const b = e.basic;
    lines.push(
      b.matched
        ? `basic rule: ${b.rule} host ${b.hostPattern} path ${b.pathPattern} → ${b.cluster} (${b.note})`
        : `basic rules: ${b.note}`,
    );
  }
  if (e.advanced?.matched)
    lines.push(`advanced rule: ${e.advanced.matched.rule} ${e.advanced.matched.cond} → ${e.advanced.matched.cluster}`);
  else if (e.advanced) lines.push(`advanced rules: ${e.advanced.evaluated} evaluated, none matched`);
  if (e.candidates) {
    const c = e.candidates;
    lines.push(
      `cluster: ${c.cluster} (rule ${c.rule}, balance ${c.policy.balance}, retries ${c.policy.retries}, crossRetries ${c.policy.crossRetries})`,
    );
    for (const s of c.subclusters) {
      const backends = s.backends.map((b) =>
        b.name === b.id ? `${b.id} w${b.weight}` : `${b.name}=${b.id} w${b.weight}`,
      );
      lines.push(`  subcluster ${s.name} weight ${s.weight}: ${backends.join(', ') || '(no backends)'}`);
    }
  } else {
    lines.push(`no route: ${e.reason}`);
  }
  return `${lines.join('\n')}\n`;
}
