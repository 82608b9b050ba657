/**
 * What each point knows, and the point each condition primitive needs (reference bfe.md §1.6,
 * the "Peek" column): connection facts (addresses, listener, TLS-or-not, time) at `connection`,
 * SNI/ALPN and client certificates from `handshake`, everything of the request head from
 * `request`. A primitive not listed here needs the request head, the safe default for one
 * added later.
 */

import type { Node } from '../condition/ast.ts';
import { parse } from '../condition/parser.ts';
import { POLICY_POINTS, type PolicyPoint } from '../contracts/policy.ts';

/** The order of a point (connection 0 … routed 3). */
export function pointOrder(point: PolicyPoint): number {
  return POLICY_POINTS.indexOf(point);
}

/** The later of two points. */
export function laterPoint(a: PolicyPoint, b: PolicyPoint): PolicyPoint {
  return pointOrder(a) >= pointOrder(b) ? a : b;
}

const CONNECTION: readonly string[] = [
  'req_cip_range',
  'req_cip_hash_in',
  'req_cip_trusted',
  'req_cip_cidr_in',
  'ses_sip_range',
  'ses_sip_cidr_in',
  'req_vip_in',
  'req_vip_range',
  'ses_vip_range',
  'ses_listener_in',
  'req_proto_secure',
  'bfe_time_range',
  'bfe_periodic_time_range',
  'default_t',
];
const HANDSHAKE: readonly string[] = [
  'ses_tls_sni_in',
  'ses_tls_alpn_in',
  'ses_tls_client_auth',
  'ses_tls_client_ca_in',
];

const PRIMITIVE_POINT: ReadonlyMap<string, PolicyPoint> = new Map([
  ...CONNECTION.map((n) => [n, 'connection'] as const),
  ...HANDSHAKE.map((n) => [n, 'handshake'] as const),
]);

/** The earliest point a primitive can be evaluated at. */
export function primitivePoint(name: string): PolicyPoint {
  return PRIMITIVE_POINT.get(name) ?? 'request';
}

/** What a condition needs: its latest-needing primitive and that primitive's point. */
export interface ConditionNeed {
  readonly point: PolicyPoint;
  /** The first primitive (in source order) that needs `point`; undefined for none. */
  readonly primitive: string | undefined;
}

/** The point a (valid) condition needs: the latest point of the primitives it calls. */
export function conditionNeed(source: string, where: string): ConditionNeed {
  let need: ConditionNeed = { point: 'connection', primitive: undefined };
  const stack: Node[] = [parse(source, where)];
  const calls: Extract<Node, { kind: 'call' }>[] = [];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (node.kind === 'call') calls.push(node);
    else if (node.kind === 'not') stack.push(node.operand);
    else if (node.kind === 'and' || node.kind === 'or') stack.push(node.right, node.left);
  }
  calls.sort((a, b) => a.start - b.start);
  for (const call of calls) {
    const point = primitivePoint(call.name);
    if (pointOrder(point) > pointOrder(need.point)) need = { point, primitive: call.name };
  }
  return need;
}
