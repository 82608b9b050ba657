/**
 * What a primitive is: a typed parameter list (the prototype check of reference bfe.md §1.4) and a
 * build step that validates its arguments and returns the compiled closure.
 */
import type { Request } from '../../contracts/types.ts';

/** A compiled condition: evaluated once per request, synchronous, allocation-light. */
export type Condition = (req: Request) => boolean;

/** Argument kinds: S = string, B = boolean (BFE's STRING / BOOL). */
export type ArgKind = 'S' | 'B';

/** What a primitive's build step may use. */
export interface BuildContext {
  /** The host tag of a host (req_host_tag_in); undefined when the book has no host tags. */
  readonly hostTag: ((host: string) => string | undefined) | undefined;
  /** The clock of the time primitives, in milliseconds since the epoch. */
  readonly now: () => number;
  /** Throws the typed build error, pointing at argument `index` (0-based). */
  fail(index: number, message: string): never;
}

/** One primitive: its parameters (name, kind) and its build step. */
export interface Primitive {
  readonly params: readonly (readonly [name: string, kind: ArgKind])[];
  /** `args` are the literal values: strings as written between the quotes, booleans as 'true'/'false'. */
  build(args: readonly string[], ctx: BuildContext): Condition;
}

/** A table of primitives by name. */
export type PrimitiveTable = Readonly<Record<string, Primitive>>;

/** Shorthand for a parameter list: `params('S:list', 'B:fold')`. */
export function params(...specs: string[]): Primitive['params'] {
  return specs.map((s) => [s.slice(2), s[0] as ArgKind] as const);
}
