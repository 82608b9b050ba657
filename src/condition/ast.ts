/**
 * The syntax tree of a condition and the tokens it is built from. Positions are 0-based offsets
 * into the source; `errors.ts` turns them into the "column N" (or "line L, column C") of messages.
 */

/** Token kinds of the condition language (reference bfe.md §1.1). */
export type TokenKind =
  | 'ident'
  | 'var'
  | 'string'
  | 'bool'
  | 'int'
  | 'and'
  | 'or'
  | 'not'
  | 'lparen'
  | 'rparen'
  | 'comma'
  | 'eof';

/** One token: kind, source span, and the value (identifier name, raw string text, literal text). */
export interface Token {
  readonly kind: TokenKind;
  readonly start: number;
  readonly end: number;
  readonly value: string;
}

/** A literal argument of a primitive call. */
export interface Arg {
  readonly kind: 'string' | 'bool' | 'int';
  /** Strings: the text between the quotes, escapes kept as written; bools: 'true'/'false'. */
  readonly value: string;
  readonly start: number;
}

/** A node of the expression tree; `start`/`end` span the source it came from. */
export type Node =
  | {
      readonly kind: 'and' | 'or';
      readonly left: Node;
      readonly right: Node;
      readonly start: number;
      readonly end: number;
    }
  | { readonly kind: 'not'; readonly operand: Node; readonly start: number; readonly end: number }
  | {
      readonly kind: 'call';
      readonly name: string;
      readonly args: readonly Arg[];
      readonly start: number;
      readonly end: number;
    }
  | {
      readonly kind: 'var';
      readonly name: string;
      readonly dollar: boolean;
      readonly start: number;
      readonly end: number;
    };
