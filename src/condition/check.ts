/**
 * The prototype check (reference bfe.md §1.4 step 2): the primitive exists, is usable on the
 * request head, and gets exactly its arguments with the right kinds. Per-primitive checks
 * (regexes, addresses, buckets…) run afterwards in each primitive's build step.
 */

import { didYouMean } from '../base/suggest.ts';
import type { Node } from './ast.ts';
import { conditionError } from './errors.ts';
import { type ArgKind, PRIMITIVES, type Primitive, UNAVAILABLE } from './primitives/index.ts';

type Call = Extract<Node, { kind: 'call' }>;

const KIND_NAME: Readonly<Record<ArgKind | 'string' | 'bool' | 'int', string>> = {
  S: 'a string',
  B: 'true or false',
  string: 'a string',
  bool: 'a boolean',
  int: 'an integer',
};

/** Returns the primitive a call names after checking name, arity and argument kinds. */
export function checkCall(call: Call, source: string, where: string): Primitive {
  const fail = (offset: number, message: string): never => {
    throw conditionError(where, source, offset, message);
  };
  const name = call.name;
  if (UNAVAILABLE.has(name)) fail(call.start, `${name} is not available when routing on the request head`);
  const primitive = Object.hasOwn(PRIMITIVES, name) ? PRIMITIVES[name] : undefined;
  if (primitive === undefined) {
    const lower = name.toLowerCase();
    const hint =
      lower !== name && Object.hasOwn(PRIMITIVES, lower)
        ? ` (names are case-sensitive: ${lower})`
        : didYouMean(name, Object.keys(PRIMITIVES));
    return fail(call.start, `primitive ${name} not found${hint}`);
  }
  const params = primitive.params;
  if (call.args.length !== params.length) {
    const list = params.map((p) => p[0]).join(', ');
    const expected =
      params.length === 0 ? 'no arguments' : `${params.length} argument${params.length === 1 ? '' : 's'} (${list})`;
    fail(call.start, `${name} expects ${expected}, got ${call.args.length}`);
  }
  call.args.forEach((arg, i) => {
    const [param, kind] = params[i] as readonly [string, ArgKind];
    const ok = kind === 'S' ? arg.kind === 'string' : arg.kind === 'bool';
    if (!ok)
      fail(arg.start, `${name} argument ${i + 1} (${param}) expects ${KIND_NAME[kind]}, got ${KIND_NAME[arg.kind]}`);
  });
  return primitive;
}
