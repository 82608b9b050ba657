/**
 * The readable form of the process log (`log.format: pretty`, or `auto` on a terminal): one
 * aligned line per record, formatted synchronously in-process by pino-pretty's `prettyFactory`
 * (no worker transport: lines written before `process.exit` are never lost, and worker threads
 * format their own lines the same way).
 *
 *   00:12:03.481 INFO:  switchboard started            version=1 panel=net config=/etc/sb.yaml
 *   00:12:09.002 WARN:  backend down                   backend=10.0.0.7:80 cluster=web reason="…"
 *   00:12:09.120 DEBUG: route                          listener=web host=a.test path=/ … thread=1
 *
 * Fields follow the message as `key=value` (strings with spaces or quotes JSON-quoted, objects
 * as JSON); `err` shows its message, and the stack on the lines below for errors and worse.
 */
import { prettyFactory } from 'pino-pretty';

/** Width the message is padded to, so the fields of consecutive lines start in one column. */
const MSG_WIDTH = 30;
/** Keys never shown as fields: the line's own parts and the pino noise. */
const SKIP = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'err']);
/** `debug`, `trace`… padded to the widest label. */
const LABEL_WIDTH = 5;

function fieldValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]*$/.test(v) && v !== '' ? v : JSON.stringify(v);
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return String(v);
}

/** `key=value …` of a record's own fields (everything but time, level, msg, pid, err). */
export function formatFields(log: Record<string, unknown>): string {
  let out = '';
  // `logger.error(err)`: pino-pretty prints the stack of an error logged as the record itself.
  const own = log.type === 'Error' && typeof log.stack === 'string';
  for (const key of Object.keys(log)) {
    if (SKIP.has(key) || log[key] === undefined || (own && key === 'stack')) continue;
    out += `${out === '' ? '' : ' '}${key}=${fieldValue(log[key])}`;
  }
  return out;
}

function errorPart(log: Record<string, unknown>): { inline: string; stack: string } {
  const err = log.err;
  if (err === undefined) return { inline: '', stack: '' };
  if (typeof err !== 'object' || err === null) return { inline: `err=${fieldValue(err)}`, stack: '' };
  const e = err as { message?: unknown; stack?: unknown };
  const inline = `err=${fieldValue(String(e.message ?? ''))}`;
  const severe = log.level === 'error' || log.level === 'fatal';
  const frames = severe && typeof e.stack === 'string' ? e.stack.split('\n').slice(1) : [];
  return { inline, stack: frames.map((f) => `\n    ${f.trim()}`).join('') };
}

/** A synchronous formatter from one JSON log line (string levels, ISO time) to one readable line. */
export function prettyFormatter(colorize: boolean): (line: string) => string {
  const format = prettyFactory({
    colorize,
    singleLine: true,
    hideObject: true,
    ignore: 'pid,hostname',
    translateTime: 'SYS:HH:MM:ss.l',
    customPrettifiers: {
      time: (t) => String(t),
    },
    messageFormat: (log, key) => {
      // After "LEVEL:": pads to the widest label so every message starts in one column.
      const pad = ' '.repeat(Math.max(0, LABEL_WIDTH - String(log.level ?? '').length));
      const msg = String(log[key] ?? '');
      const { inline, stack } = errorPart(log);
      const fields = [formatFields(log), inline].filter((s) => s !== '').join(' ');
      return `${pad}${fields === '' ? msg : `${msg.padEnd(MSG_WIDTH)} ${fields}`}${stack}`;
    },
  });
  return (line) => `${format(line)}\n`;
}
