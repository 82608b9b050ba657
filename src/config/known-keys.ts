/**
 * The keys a zod object schema accepts at a path, for "did you mean" on an unknown key: walks
 * through defaults, optionals, pipes, unions (every branch), arrays and records.
 */
import type { z } from 'zod';

interface Def {
  readonly type: string;
  readonly shape?: Record<string, unknown>;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
}

function def(s: z.ZodType): Def {
  return (s as unknown as { _zod: { def: Def } })._zod.def;
}

/** The object schemas `s` may be at its top (unwrapping wrappers, every union branch). */
function objects(s: z.ZodType, depth = 0): z.ZodType[] {
  if (depth > 20) return [];
  const d = def(s);
  switch (d.type) {
    case 'object':
      return [s];
    case 'default':
    case 'optional':
    case 'nullable':
    case 'prefault':
    case 'catch':
    case 'readonly':
      return d.innerType === undefined ? [] : objects(d.innerType, depth + 1);
    case 'pipe':
      return d.in === undefined ? [] : objects(d.in, depth + 1);
    case 'union':
      return (d.options ?? []).flatMap((o) => objects(o, depth + 1));
    default:
      return [];
  }
}

/** The schemas found under `key` (a property name or an array index) of `s`. */
function child(s: z.ZodType, key: PropertyKey, depth = 0): z.ZodType[] {
  if (depth > 20) return [];
  const d = def(s);
  switch (d.type) {
    case 'object': {
      const v = typeof key === 'string' ? d.shape?.[key] : undefined;
      return v === undefined ? [] : [v as z.ZodType];
    }
    case 'array':
      return typeof key === 'number' && d.element !== undefined ? [d.element] : [];
    case 'record':
      return d.valueType === undefined ? [] : [d.valueType];
    case 'default':
    case 'optional':
    case 'nullable':
    case 'prefault':
    case 'catch':
    case 'readonly':
      return d.innerType === undefined ? [] : child(d.innerType, key, depth + 1);
    case 'pipe':
      return d.in === undefined ? [] : child(d.in, key, depth + 1);
    case 'union':
      return (d.options ?? []).flatMap((o) => child(o, key, depth + 1));
    default:
      return [];
  }
}

/** Every key accepted by the object(s) at `path` under `schema`. */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at = [schema];
  for (const key of path) at = at.flatMap((s) => child(s, key));
  const keys = new Set<string>();
  for (const o of at.flatMap((s) => objects(s))) for (const k of Object.keys(def(o).shape ?? {})) keys.add(k);
  return [...keys];
}
