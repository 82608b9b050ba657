/**
 * `log.accessFormat: pretty` (issue 45 item 7): one short line a person reads, coloured by
 * status when written to a terminal (and `NO_COLOR` is unset):
 *
 *   06:10:00.123 200 GET  a.test/a           1.2ms   512B  127.0.0.1:50632 → 10.0.0.1:80 web
 *   06:10:01.002 502 GET  a.test/b           3.0ms   120B  127.0.0.1:50634 → - web connect_failed "connect ECONNREFUSED …"
 *   06:10:02.000 ok  tls  a.test           120.5ms  4.1kB  127.0.0.1:50640 → 10.0.0.9:443 secure TLSv1.3
 *
 * Local time; the status (a connection line without one shows its result); the method (or the
 * protocol: `tls`, `h2c`); host and path; the duration; the bytes sent to the client; client →
 * backend and the cluster; then the result and reason when it is not `ok`, and the TLS version
 * on a TLS line. Every field is still in the JSON form (`json`, the default): this one is for
 * watching a terminal, not for machines.
 */
import type { AccessRecord } from '../base/log.ts';

const RESET = '\u001b[0m';
const DIM = '\u001b[2m';
const RED = '\u001b[31m';
const GREEN = '\u001b[32m';
const YELLOW = '\u001b[33m';
const CYAN = '\u001b[36m';

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `06:10:00.123`, local time (as the readable process log). */
function clock(d: Date): string {
  const ms = d.getMilliseconds();
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}`;
}

/** `1.2ms`, `1.25s`. */
export function prettyDuration(ms: number): string {
  return ms < 1000 ? `${ms.toFixed(1)}ms` : `${(ms / 1000).toFixed(2)}s`;
}

/** `512B`, `4.1kB`, `3.2MB`. */
export function prettyBytes(n: number): string {
  if (n < 1000) return `${n}B`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}kB`;
  return `${(n / 1_000_000).toFixed(1)}MB`;
}

function statusColour(r: AccessRecord): string {
  const s = r.status;
  if (s === undefined) return r.result === 'ok' ? GREEN : RED;
  if (s >= 500) return RED;
  if (s >= 400) return YELLOW;
  if (s >= 300) return CYAN;
  return GREEN;
}

/** The pretty line of `record` written at `now`; `colour`: ANSI colours (a terminal). */
export function prettyLine(record: AccessRecord, colour: boolean, now = new Date()): string {
  const status = (record.status === undefined ? record.result : String(record.status)).padEnd(3);
  const verb = (record.method ?? record.protocol ?? '-').padEnd(4);
  const target = `${record.host ?? ''}${record.path ?? ''}`.padEnd(18);
  const size = `${prettyDuration(record.durationMs).padStart(8)} ${prettyBytes(record.bytesOut).padStart(6)}`;
  let tail = `${record.client} → ${record.backend ?? '-'}${record.cluster === undefined ? '' : ` ${record.cluster}`}`;
  if (record.result !== 'ok')
    tail += ` ${record.result}${record.reason === undefined ? '' : ` ${JSON.stringify(record.reason)}`}`;
  if (record.secure === true) tail += ` secure${record.tls_version === undefined ? '' : ` ${record.tls_version}`}`;
  if (!colour) return `${clock(now)} ${status} ${verb} ${target} ${size}  ${tail}`;
  return `${DIM}${clock(now)}${RESET} ${statusColour(record)}${status}${RESET} ${verb} ${target} ${size}  ${tail}`;
}
