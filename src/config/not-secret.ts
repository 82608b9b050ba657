/**
 * `GET /config` hides every field whose name looks like a secret (`key`, `token`, `auth`, …,
 * app/admin/config-view.ts), whatever schema describes it. A few fields carry such a name but
 * hold no secret: a certificate's `key` is a file path, a hash `key` a header name. Their schema
 * says so with `notSecret(...)`; a plugin marks its own the same way. The mark lives in a
 * WeakSet, not in `.meta()`, so the generated JSON Schema stays as it was.
 */
import type { z } from 'zod';

const marked = new WeakSet<object>();

/** Marks `schema` as holding no secret despite its field's name; returns the same schema. */
export function notSecret<T extends z.ZodType>(schema: T): T {
  marked.add(schema);
  return schema;
}

/** Whether `schema` itself was marked with `notSecret`. */
export function isMarkedNotSecret(schema: object): boolean {
  return marked.has(schema);
}
