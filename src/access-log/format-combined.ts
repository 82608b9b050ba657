/**
 * `log.accessFormat: combined` (issue 45 item 7): the Apache/nginx combined log line with the
 * fields an access record has, then the router's own fields as `key=value`, so a tool that
 * reads combined lines (GoAccess, awk scripts, log shippers' nginx parsers) reads these:
 *
 *   127.0.0.1 - - [05/Dec/2026:06:10:00 +0000] "GET /a HTTP/1.1" 200 512 "-" "-" host=a.test listener=web result=ok …
 *   └ client ip   └ time the line is written    └ request line   │   │   └ referer, user agent: not kept ("-")
 *                                                                │   └ bytes sent to the client (head and body)
 *                                                                └ status ("-" on a connection line without one)
 *
 * A connection line (TLS passthrough, per-connection routing) has `"-"` for its request line
 * when no request was read. Values with spaces or quotes are JSON-quoted; absent fields are
 * left out.
 */
import type { AccessRecord } from '../base/log.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The fields after the combined ones, in this order, when present. */
const EXTRA: readonly (keyof AccessRecord)[] = [
  'host',
  'listener',
  'result',
  'reason',
  'product',
  'cluster',
  'backend',
  'attempts',
  'durationMs',
  'bytesIn',
  'secure',
  'sni',
  'alpn',
  'tls_version',
  'grpcStatus',
  'policy',
  'action',
  'trace_id',
  'span_id',
  'line',
];

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `05/Dec/2026:06:10:00 +0000` (UTC, as the JSON lines' `time`). */
export function combinedTime(d: Date): string {
  const date = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}`;
  return `${date}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

/** The address part of `ip:port` (an IPv6 address has colons of its own: the last one splits). */
export function clientAddress(client: string): string {
  const colon = client.lastIndexOf(':');
  return colon <= 0 ? client || '-' : client.slice(0, colon);
}

const PROTOCOLS: Readonly<Record<string, string>> = { http1: 'HTTP/1.1', h2: 'HTTP/2.0', h2c: 'HTTP/2.0' };

/** `"GET /a HTTP/1.1"`, or `"-"` when the line has no request. */
function requestLine(r: AccessRecord): string {
  if (r.method === undefined) return '"-"';
  const text = `${r.method} ${r.path ?? '-'} ${PROTOCOLS[r.protocol ?? ''] ?? 'HTTP/1.1'}`;
  return JSON.stringify(text);
}

/** A `key=value` value: bare when it needs no quoting, else JSON-quoted. */
export function fieldValue(v: unknown): string {
  const s = String(v);
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s);
}

/** One combined line for `record`, written at `now`. */
export function combinedLine(record: AccessRecord, now = new Date()): string {
  const status = record.status === undefined ? '-' : String(record.status);
  let line = `${clientAddress(record.client)} - - [${combinedTime(now)}] ${requestLine(record)} ${status} ${record.bytesOut} "-" "-"`;
  for (const key of EXTRA) {
    const v = record[key];
    if (v !== undefined) line += ` ${key}=${fieldValue(v)}`;
  }
  return line;
}
