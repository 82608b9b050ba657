/**
 * The condition primitives a rule's `when:` may use on an access line: those whose value the
 * line keeps (`line-request.ts`). Any other primitive (headers, cookies, query, TLS, VIP, the
 * session address, the raw target, the port, host tags) would read as absent on every line,
 * so a rule using it is refused at config load, naming the rule and the primitive.
 */
import { SwitchboardError } from '../base/errors.ts';
import type { Node } from '../condition/ast.ts';
import { parse } from '../condition/parser.ts';

/** Primitive → what it reads of the line (docs/logging.md lists the same). */
export const LINE_PRIMITIVES: ReadonlyMap<string, string> = new Map([
  ['req_host_in', 'host'],
  ['req_host_regmatch', 'host'],
  ['req_host_suffix_in', 'host'],
  ['req_path_in', 'path'],
  ['req_path_prefix_in', 'path'],
  ['req_path_suffix_in', 'path'],
  ['req_path_contain', 'path'],
  ['req_path_element_prefix_in', 'path'],
  ['req_path_regmatch', 'path'],
  ['req_method_in', 'method'],
  ['req_cip_range', 'client'],
  ['req_cip_cidr_in', 'client'],
  ['req_cip_hash_in', 'client'],
  ['ses_listener_in', 'listener'],
  ['bfe_time_range', 'the time the line is written'],
  ['bfe_periodic_time_range', 'the time the line is written'],
  ['default_t', 'nothing'],
]);

/** The primitives `source` calls, in source order (a valid condition; `where` for parse errors). */
function callsOf(source: string, where: string): string[] {
  const calls: Extract<Node, { kind: 'call' }>[] = [];
  const stack: Node[] = [parse(source, where)];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (node.kind === 'call') calls.push(node);
    else if (node.kind === 'not') stack.push(node.operand);
    else if (node.kind === 'and' || node.kind === 'or') stack.push(node.right, node.left);
  }
  return calls.sort((a, b) => a.start - b.start).map((c) => c.name);
}

/** Throws SWB_ERR_CONFIG at `where` when `source` calls a primitive an access line cannot answer. */
export function checkLinePrimitives(source: string, where: string): void {
  for (const name of callsOf(source, where)) {
    if (LINE_PRIMITIVES.has(name)) continue;
    throw new SwitchboardError(
      'SWB_ERR_CONFIG',
      `${where}: ${name} cannot be evaluated on an access line (it keeps only host, path, method, client, listener; ` +
        `usable: ${[...LINE_PRIMITIVES.keys()].join(', ')})`,
    );
  }
}
