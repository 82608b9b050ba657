/**
 * Logging with pino: one process logger for readable operational lines, and an access logger
 * writing one JSON line per connection (or per request) to stdout, a file, or nowhere.
 */
import { type DestinationStream, destination, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/** The process logger (stderr keeps stdout free for access lines). */
export function createLogger(level: string, stream?: DestinationStream): Logger {
  return pino({ level, base: { pid: process.pid } }, stream ?? destination(2));
}

/** One access-log record. Field names are documented in README "Access log". */
export interface AccessRecord {
  listener: string;
  client: string;
  protocol?: string;
  host?: string;
  path?: string;
  method?: string;
  product?: string;
  cluster?: string;
  backend?: string;
  attempts?: number;
  bytesIn: number;
  bytesOut: number;
  durationMs: number;
  result: string;
  status?: number;
  reason?: string;
}

export type AccessLog = (record: AccessRecord) => void;

/** An access log writing to `target`: 'stdout', 'off', a file path, or a stream (tests). */
export function createAccessLog(target: string | DestinationStream): AccessLog {
  if (target === 'off') return () => {};
  const stream =
    typeof target !== 'string'
      ? target
      : target === 'stdout'
        ? destination(1)
        : destination({ dest: target, mkdir: true, sync: false });
  const log = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime, messageKey: 'msg' }, stream);
  return (record) => log.info(record, 'access');
}
