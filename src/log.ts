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
  /** 'request' on per-request lines (log.accessMode: per-request); absent on connection lines. */
  line?: 'request';
}

export type AccessLog = (record: AccessRecord) => void;

/** An access log that can reopen its file (logrotate sends SIGUSR1) and flush on close. */
export type ReopenableAccessLog = AccessLog & {
  /** Reopens the file at its path (after logrotate moved it); a no-op for stdout and off. */
  reopen(): void;
  /** Flushes pending lines (shutdown). */
  flush(): void;
};

/** An access log writing to `target`: 'stdout', 'off', a file path, or a stream (tests). */
export function createAccessLog(target: string | DestinationStream): ReopenableAccessLog {
  if (target === 'off') return Object.assign(() => {}, { reopen() {}, flush() {} });
  const sonic =
    typeof target === 'string'
      ? target === 'stdout'
        ? destination(1)
        : destination({ dest: target, mkdir: true, sync: false })
      : undefined;
  const stream = sonic ?? (target as DestinationStream);
  const log = pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime, messageKey: 'msg' }, stream);
  const file = typeof target === 'string' && target !== 'stdout';
  return Object.assign((record: AccessRecord) => log.info(record, 'access'), {
    reopen() {
      if (file) sonic?.reopen();
    },
    flush() {
      try {
        sonic?.flushSync();
      } catch {
        // Nothing written yet, or the stream is not ready: nothing to flush.
      }
    },
  });
}
