/**
 * The parser of the condition language: tokens → tree (reference bfe.md §1.2).
 *
 *   expr    := unary ( '&&' unary )*  |  unary ( '||' unary )*     one operator kind per level
 *   unary   := '!' unary | primary                                  '!' binds tightest
 *   primary := '(' expr ')' | IDENT '(' [lit (',' lit)*] ')' | IDENT | '$' IDENT
 *   lit     := STRING | BOOL | INT
 *
 * Why one operator kind per level: BFE's shipped yacc grammar binds `||` tighter than `&&`, the
 * opposite of its documentation. Rather than pick one reading, a mix of `&&` and `||` without
 * parentheses is refused with both parenthesised readings spelled out. Chains are left-associative
 * and evaluation short-circuits, so associativity never changes a result.
 */
import type { Arg, Node, Token } from './ast.ts';
import { conditionError } from './errors.ts';
import { tokenize } from './lexer.ts';

/** Maximum nesting of '(' and '!' (chains of && or || are flat and unbounded). */
export const MAX_DEPTH = 64;

/** Parses a condition into its tree; throws SWB_ERR_CONDITION naming `where` and the column. */
export function parse(source: string, where: string): Node {
  const tokens = tokenize(source, where);
  let at = 0;
  let depth = 0; // nesting of '(' and '!', bounded so deep input is an error, not a stack overflow
  const enter = (token: Token): void => {
    if (++depth > MAX_DEPTH) fail(token, `nesting deeper than ${MAX_DEPTH} levels of '(' and '!'`);
  };
  const peek = (): Token => tokens[at] as Token;
  const fail = (token: Token, message: string): never => {
    throw conditionError(where, source, token.start, message);
  };
  const describe = (t: Token): string => (t.kind === 'eof' ? 'end of input' : `'${source.slice(t.start, t.end)}'`);

  const expr = (): Node => {
    const first = unary();
    const op = peek();
    if (op.kind !== 'and' && op.kind !== 'or') return first;
    const operands: Node[] = [first];
    while (peek().kind === 'and' || peek().kind === 'or') {
      const token = peek();
      if (token.kind !== op.kind) mixed(operands, op, token);
      at++;
      operands.push(unary());
    }
    let node = operands[0] as Node;
    for (let i = 1; i < operands.length; i++) {
      const right = operands[i] as Node;
      node = { kind: op.kind, left: node, right, start: node.start, end: right.end };
    }
    return node;
  };

  // Refuses `a && b || c`, showing both readings built from the operands around the clash.
  const mixed = (operands: Node[], op: Token, clash: Token): never => {
    const text = (n: Node): string => source.slice(n.start, n.end);
    const left = operands.slice(0, -1).map(text).join(` ${op.value} `);
    const middle = text(operands[operands.length - 1] as Node);
    at++;
    const right = text(unary());
    const sep = left === '' ? '' : ` ${op.value} `;
    return fail(
      clash,
      `'${op.value}' and '${clash.value}' mixed without parentheses; add them, e.g. ` +
        `(${left}${sep}${middle}) ${clash.value} ${right}  or  ${left}${sep}(${middle} ${clash.value} ${right})`,
    );
  };

  const unary = (): Node => {
    const token = peek();
    if (token.kind === 'not') {
      at++;
      enter(token);
      const operand = unary();
      depth--;
      return { kind: 'not', operand, start: token.start, end: operand.end };
    }
    return primary();
  };

  const primary = (): Node => {
    const token = peek();
    at++;
    if (token.kind === 'lparen') {
      enter(token);
      const inner = expr();
      const close = peek();
      if (close.kind !== 'rparen') fail(close, `expected ')' or an operator, got ${describe(close)}`);
      at++;
      depth--;
      return { ...inner, start: token.start, end: close.end };
    }
    if (token.kind === 'var')
      return { kind: 'var', name: token.value, dollar: true, start: token.start, end: token.end };
    if (token.kind !== 'ident') return fail(token, `expected a primitive call, '!' or '(', got ${describe(token)}`);
    if (peek().kind !== 'lparen')
      return { kind: 'var', name: token.value, dollar: false, start: token.start, end: token.end };
    at++;
    const args = argList();
    return { kind: 'call', name: token.value, args, start: token.start, end: (tokens[at - 1] as Token).end };
  };

  // After '(' of a call: literals separated by commas, then ')'.
  const argList = (): Arg[] => {
    const args: Arg[] = [];
    if (peek().kind === 'rparen') {
      at++;
      return args;
    }
    for (;;) {
      const token = peek();
      if (token.kind !== 'string' && token.kind !== 'bool' && token.kind !== 'int') {
        fail(token, `expected a string, true or false, got ${describe(token)}`);
      }
      args.push({ kind: token.kind as Arg['kind'], value: token.value, start: token.start });
      at++;
      const sep = peek();
      at++;
      if (sep.kind === 'rparen') return args;
      if (sep.kind !== 'comma') fail(sep, `expected ',' or ')', got ${describe(sep)}`);
    }
  };

  if (peek().kind === 'eof') fail(peek(), 'empty condition: expected an expression such as default_t()');
  const tree = expr();
  const rest = peek();
  if (rest.kind !== 'eof') fail(rest, `expected '&&', '||' or end of input, got ${describe(rest)}`);
  return tree;
}
