/**
 * The compiler: tree → closure tree (reference bfe.md §1.4, §1.5).
 *
 * 1. Parse (lexer + parser), refusing mixed `&&`/`||` without parentheses.
 * 2. For each call: prototype check (`check.ts`), then the primitive's build step, which
 *    validates its arguments and precomputes sets, regexes, masks and bitmaps.
 * 3. `$name` compiles the named condition's source on first use (memoised per compile), with a
 *    stack of names being compiled so a cycle is an error; unknown names are errors; a bare
 *    identifier is BFE's "unresolved variable".
 * 4. `&&`, `||` and `!` become closures that short-circuit; evaluation is synchronous.
 */

import { didYouMean } from '../base/suggest.ts';
import type { Node } from './ast.ts';
import { checkCall } from './check.ts';
import { conditionError, position } from './errors.ts';
import { parse } from './parser.ts';
import type { BuildContext, Condition } from './primitives/index.ts';

/** How to compile a condition (see index.ts for the field docs). */
export interface CompileOptions {
  /** Named conditions usable as $name (name without '$' → source). Compiled on demand, cycles detected. */
  readonly named?: Readonly<Record<string, string>>;
  /** The host tag of a host (for req_host_tag_in); supplied by the address book's host table. */
  readonly hostTag?: (host: string) => string | undefined;
  /** Config path used in error messages, e.g. 'addressBook.products.web.rules[2].cond'. */
  readonly where: string;
  /** Clock for time primitives (tests inject one). Defaults to Date.now. */
  readonly now?: () => number;
}

/** State shared while compiling one condition and the named conditions it uses. */
interface State {
  readonly named: Readonly<Record<string, string>>;
  readonly hostTag: ((host: string) => string | undefined) | undefined;
  readonly now: () => number;
  readonly done: Map<string, Condition>;
  readonly stack: string[];
}

/** Compiles a condition into a closure; throws SwitchboardError code 'SWB_ERR_CONDITION'. */
export function compileCondition(source: string, options: CompileOptions): Condition {
  return compileWith(source, options.where, stateOf(options, []));
}

/** Builds the compile state from options; `stack` seeds the names already being compiled. */
export function stateOf(options: CompileOptions, stack: string[]): State {
  return {
    named: options.named ?? {},
    hostTag: options.hostTag,
    now: options.now ?? Date.now,
    done: new Map(),
    stack,
  };
}

/** Parses and compiles one source under `where`. */
export function compileWith(source: string, where: string, state: State): Condition {
  if (typeof source !== 'string') throw conditionError(where, '', 0, 'expected a condition string');
  return compileNode(parse(source, where), source, where, state);
}

/** Compiles one node of a parsed source. */
function compileNode(node: Node, source: string, where: string, state: State): Condition {
  switch (node.kind) {
    case 'and':
    case 'or':
      return compileChain(node, source, where, state);
    case 'not': {
      const operand = compileNode(node.operand, source, where, state);
      return (req) => !operand(req);
    }
    case 'call': {
      const primitive = checkCall(node, source, where);
      const args = node.args;
      const ctx: BuildContext = {
        hostTag: state.hostTag,
        now: state.now,
        fail: (index, message) => {
          throw conditionError(where, source, args[index]?.start ?? node.start, `${node.name}: ${message}`);
        },
      };
      return primitive.build(
        args.map((a) => a.value),
        ctx,
      );
    }
    case 'var':
      return compileNamed(node, source, where, state);
  }
}

/**
 * Compiles a chain `a && b && c` (a left-deep tree of one operator) into one loop, so a long
 * chain neither recurses deeply at build time nor nests closures at evaluation time.
 */
function compileChain(
  node: Extract<Node, { kind: 'and' | 'or' }>,
  source: string,
  where: string,
  state: State,
): Condition {
  const operands: Node[] = [];
  let cursor: Node = node;
  while (cursor.kind === node.kind) {
    const link = cursor as Extract<Node, { kind: 'and' | 'or' }>;
    operands.push(link.right);
    cursor = link.left;
  }
  operands.push(cursor);
  const parts = operands.reverse().map((n) => compileNode(n, source, where, state));
  if (parts.length === 2) {
    const [left, right] = parts as [Condition, Condition];
    return node.kind === 'and' ? (req) => left(req) && right(req) : (req) => left(req) || right(req);
  }
  if (node.kind === 'and') {
    return (req) => {
      for (let i = 0; i < parts.length; i++) if (!(parts[i] as Condition)(req)) return false;
      return true;
    };
  }
  return (req) => {
    for (let i = 0; i < parts.length; i++) if ((parts[i] as Condition)(req)) return true;
    return false;
  };
}

/** Resolves `$name` (or refuses a bare identifier) into the named condition's closure. */
function compileNamed(node: Extract<Node, { kind: 'var' }>, source: string, where: string, state: State): Condition {
  const fail = (message: string): never => {
    throw conditionError(where, source, node.start, message);
  };
  const name = node.name;
  if (!node.dollar) {
    const hint = Object.hasOwn(state.named, name) ? `; write $${name} for the named condition` : '';
    return fail(`unresolved variable '${name}': expected a primitive call such as ${name}(…)${hint}`);
  }
  const text = Object.hasOwn(state.named, name) ? state.named[name] : undefined;
  if (text === undefined) return fail(`unknown condition $${name}${didYouMean(name, Object.keys(state.named))}`);
  const cycleAt = state.stack.indexOf(name);
  if (cycleAt >= 0) {
    return fail(`condition cycle ${[...state.stack.slice(cycleAt), name].map((n) => `$${n}`).join(' → ')}`);
  }
  const known = state.done.get(name);
  if (known !== undefined) return known;
  state.stack.push(name);
  const compiled = compileWith(text, `${where}: ${position(source, node.start)}: in $${name}`, state);
  state.stack.pop();
  state.done.set(name, compiled);
  return compiled;
}
