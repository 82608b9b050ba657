/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header),
 * parsed strictly: `00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>`, lower-case hex,
 * neither id all zeros. A header that does not parse is ignored (the request is traced as a new
 * root), never an error: it is the caller's header, forwarded untouched whatever it holds.
 * A future version (not `00`, not `ff`) may carry more fields after the flags (`-…`); its first
 * four fields are read as version 00's, as the spec asks.
 */

/** The caller's span, as its `traceparent` names it. */
export interface ParentSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** The caller's sampled flag (bit 0 of the flags). */
  readonly sampled: boolean;
}

const HEX = /^[0-9a-f]+$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/** The parent named by `header`, or undefined when it is absent or malformed. */
export function parseTraceparent(header: string | undefined): ParentSpan | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value.length < 55) return undefined;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return undefined;
  if (version === '00' ? value.length !== 55 : value.length > 55 && value[55] !== '-') return undefined;
  if (value[2] !== '-' || value[35] !== '-' || value[52] !== '-') return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}
