/** BFE's condition language: compile a condition string into a synchronous predicate (see README.md). */
export type { CompileOptions } from './compile.ts';
export { compileCondition } from './compile.ts';
export { checkNamedConditions } from './named.ts';
export type { Condition } from './primitives/index.ts';
