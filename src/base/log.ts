/**
 * Logging with pino: one process logger for operational lines (stderr), and an access logger
 * writing one JSON line per connection (or per request) to stdout, a file, or nowhere.
 *
 * Both write JSON with a string `level` ("info") and an ISO `time`. The process log is readable
 * lines instead (src/base/log-pretty.ts) with `log.format: pretty`, or `auto` (the default) when
 * stderr is a terminal; a reload may switch level and format (`configureLogger`). Worker
 * threads format their own lines the same way and carry a `thread` field (docs/logging.md).
 */
import { isatty } from 'node:tty';
import { type DestinationStream, destination, type Logger, pino } from 'pino';
import { prettyFormatter } from './log-pretty.ts';

export type { Logger } from 'pino';

/** `log.format`: `auto` is `pretty` when stderr is a terminal, else `json`. */
export type LogFormat = 'auto' | 'pretty' | 'json';

/** What a process logger is created with besides its level. */
export interface LoggerOptions {
  readonly format?: LogFormat;
  /** A worker thread's index: every line carries `thread`. */
  readonly thread?: number;
}

/** `auto` resolved for this process (fd 2 is checked, which also works in worker threads). */
export function resolveLogFormat(format: LogFormat | undefined, tty = isatty(2)): 'pretty' | 'json' {
  if (format === 'pretty' || format === 'json') return format;
  return tty ? 'pretty' : 'json';
}

/** The process logger's destination: JSON lines as they are, or formatted first (switchable). */
class LogSink {
  readonly #out: DestinationStream;
  readonly #colorize: boolean;
  /** Whether the destination is a terminal (`auto` means pretty). */
  readonly tty: boolean;
  #pretty: ((line: string) => string) | undefined;

  constructor(out: DestinationStream, tty: boolean) {
    this.#out = out;
    this.tty = tty;
    this.#colorize = tty && process.env.NO_COLOR === undefined;
  }

  setFormat(format: 'pretty' | 'json'): void {
    if (format === 'json') this.#pretty = undefined;
    else this.#pretty ??= prettyFormatter(this.#colorize);
  }

  write(line: string): void {
    this.#out.write(this.#pretty === undefined ? line : this.#pretty(line));
  }
}

const sinks = new WeakMap<Logger, LogSink>();

/** Shared by both loggers: `"level":"info"` and `"time":"2026-…Z"`. */
const formatting = {
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
} as const;

/** The process logger (stderr keeps stdout free for access lines); `stream` replaces stderr (tests). */
export function createLogger(level: string, stream?: DestinationStream, options: LoggerOptions = {}): Logger {
  const tty = stream === undefined && isatty(2);
  // Synchronous: lines keep their order and none is lost on process.exit.
  const sink = new LogSink(stream ?? destination({ dest: 2, sync: true }), tty);
  sink.setFormat(resolveLogFormat(options.format, tty));
  const base = options.thread === undefined ? { pid: process.pid } : { pid: process.pid, thread: options.thread };
  const logger = pino({ level, base, ...formatting }, sink);
  sinks.set(logger, sink);
  return logger;
}

/** Applies a (reloaded) `log` config section to a logger `createLogger` made: level and format. */
export function configureLogger(logger: Logger, log: { readonly level: string; readonly format?: LogFormat }): void {
  logger.level = log.level;
  const sink = sinks.get(logger);
  sink?.setFormat(resolveLogFormat(log.format, sink.tty));
}

/** One access-log record. Field names are documented in docs/operations.md "Access log". */
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
  /** gRPC requests the router answered itself: the `grpc-status` sent (the wire `:status` is 200). */
  grpcStatus?: number;
  reason?: string;
  /** The `policies:` rule that fired (its name), and what it did: `close` or `answer` (issue 42). */
  policy?: string;
  action?: string;
  /** With `tracing:`, when the request was sampled: its trace and the router's SERVER span (issue 44, docs/tracing.md). */
  trace_id?: string;
  span_id?: string;
  /** 'request' on per-request lines (log.accessMode: per-request); absent on connection lines. */
  line?: 'request';
  /**
   * TLS lines only (terminated or passed through; issue 45 item 7, docs/logging.md): `secure`
   * true, the SNI, the ALPN protocol (terminated: the one agreed; passthrough: those offered,
   * comma-separated) and the TLS version (terminated: agreed; passthrough: the highest offered).
   */
  secure?: true;
  sni?: string;
  alpn?: string;
  tls_version?: string;
}

export type AccessLog = (record: AccessRecord) => void;

/** An access log that can reopen its file (logrotate sends SIGUSR1) and flush on close. */
export type ReopenableAccessLog = AccessLog & {
  /** Reopens the file at its path (after logrotate moved it); a no-op for stdout and off. */
  reopen(): void;
  /** Flushes pending lines (shutdown). */
  flush(): void;
  /** True for `access: off`: nothing is written, so a caller may skip building a line. */
  readonly off?: boolean;
};

/** The mode an access-log file is created with (the process umask may narrow it further). */
export const ACCESS_LOG_MODE = 0o640;

/**
 * An access log writing to `target`: 'stdout', 'off', a file path, or a stream (tests). `line`
 * (`log.accessFormat` combined or pretty, src/access-log/format.ts) makes each record's text
 * instead of pino's JSON; a newline is added.
 */
export function createAccessLog(
  target: string | DestinationStream,
  line?: (record: AccessRecord) => string,
): ReopenableAccessLog {
  if (target === 'off') return Object.assign(() => {}, { reopen() {}, flush() {}, off: true });
  const sonic =
    typeof target === 'string'
      ? target === 'stdout'
        ? destination(1)
        : // 0640 (before the umask): client addresses and paths are not for every local user.
          destination({ dest: target, mkdir: true, sync: false, mode: ACCESS_LOG_MODE })
      : undefined;
  const stream = sonic ?? (target as DestinationStream);
  const log = pino({ base: null, messageKey: 'msg', ...formatting }, stream);
  const file = typeof target === 'string' && target !== 'stdout';
  const write =
    line === undefined
      ? (record: AccessRecord) => log.info(record, 'access')
      : (record: AccessRecord) => stream.write(`${line(record)}\n`);
  return Object.assign(write, {
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
