/**
 * Answers in the router's own words, built once per snapshot: a status, header lines, a small
 * body. The panel adds the framing (Content-Length, Connection) when it writes one.
 */
import type { PolicyAnswer } from '../contracts/policy.ts';

export { ANSWER_BODY_LIMIT, headersSchema, statusSchema } from '../config/policies.ts';

/** The parts of an answer as written in config. */
export interface AnswerParts {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly body?: string | Uint8Array | undefined;
  readonly contentType?: string | undefined;
}

/** A frozen answer; `Content-Type` comes first when a body or a type is given. */
export function makeAnswer(parts: AnswerParts): PolicyAnswer {
  const body =
    typeof parts.body === 'string' ? new TextEncoder().encode(parts.body) : (parts.body ?? new Uint8Array(0));
  const headers: (readonly [string, string])[] = [];
  const given = Object.entries(parts.headers ?? {});
  const typed = given.some(([n]) => n.toLowerCase() === 'content-type');
  if (!typed && (parts.contentType !== undefined || body.length > 0))
    headers.push(['Content-Type', parts.contentType ?? 'text/plain; charset=utf-8']);
  for (const [name, value] of given) headers.push([name, value]);
  return Object.freeze({ status: parts.status, headers: Object.freeze(headers), body });
}

/** The answer with header lines added after its own (a computed `Retry-After`, `Location`). */
export function withHeaders(answer: PolicyAnswer, extra: readonly (readonly [string, string])[]): PolicyAnswer {
  return { status: answer.status, headers: [...answer.headers, ...extra], body: answer.body };
}
