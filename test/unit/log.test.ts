/**
 * The process logger (src/base/log.ts, src/base/log-pretty.ts): JSON with string levels and ISO time, the
 * readable form aligned, `auto` by terminal, a reloaded `log` section switching level and format
 * of the same logger, `thread` on worker lines; and the debug routing lines subscribed only while
 * the level asks for them (app/runtime/route-debug.ts).
 */
import { channel } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { configureLogger, createAccessLog, createLogger, resolveLogFormat } from '../../src/base/log.ts';

function capture(): { lines: string[]; stream: { write(s: string): void } } {
  const lines: string[] = [];
  return { lines, stream: { write: (s: string) => lines.push(s) } };
}

describe('process logger', () => {
  it('writes JSON lines with a string level and an ISO time', () => {
    const { lines, stream } = capture();
    const log = createLogger('info', stream, { format: 'json' });
    log.warn({ backend: '127.0.0.1:1' }, 'backend down');
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', backend: '127.0.0.1:1', msg: 'backend down' });
    expect(String(line.time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('writes aligned readable lines with pretty: time, level, message column, key=value fields', () => {
    const { lines, stream } = capture();
    const log = createLogger('debug', stream, { format: 'pretty', thread: 1 });
    log.info({ listener: 'web', address: '127.0.0.1:80' }, 'listening');
    log.debug({ host: 'a.test', reason: 'two words' }, 'route');
    log.error({ err: new Error('boom') }, 'failed');
    const [info, debug, error] = lines;
    expect(info).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO: {2}listening +thread=1 listener=web address=127\.0\.0\.1:80\n$/);
    expect(debug).toMatch(/^\d\d:\d\d:\d\d\.\d{3} DEBUG: route +thread=1 host=a\.test reason="two words"\n$/);
    // The message starts in one column whatever the level; so do the fields.
    expect(info!.indexOf('listening')).toBe(debug!.indexOf('route'));
    expect(info!.indexOf('thread=')).toBe(debug!.indexOf('thread='));
    expect(error).toMatch(/ERROR: failed +thread=1 err=boom\n {4}at /);
  });

  it('auto is pretty on a terminal and JSON otherwise', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat(undefined, false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
  });

  it('a reloaded log section switches level and format of the same logger', () => {
    const { lines, stream } = capture();
    const log = createLogger('info', stream, { format: 'json' });
    log.debug('hidden');
    configureLogger(log, { level: 'debug', format: 'pretty' });
    log.debug('shown');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/DEBUG: shown/);
    configureLogger(log, { level: 'info', format: 'json' });
    log.info('back');
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 'info', msg: 'back' });
  });

  it('access lines carry level "info", msg "access" and an ISO time', () => {
    const { lines, stream } = capture();
    const access = createAccessLog(stream);
    access({ listener: 'web', client: '127.0.0.1:1', bytesIn: 1, bytesOut: 2, durationMs: 3, result: 'ok' });
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', msg: 'access', listener: 'web' });
    expect(String(line.time)).toMatch(/Z$/);
  });
});

describe('routing-decision lines (app/runtime/route-debug.ts)', () => {
  it('subscribe only while the level is debug or more verbose, following level changes', async () => {
    const { RouteDebugLog } = await import('../../app/runtime/route-debug.ts');
    const decided = channel('switchboard:route:decided');
    const before = decided.hasSubscribers;
    const { lines, stream } = capture();
    const log = createLogger('info', stream, { format: 'json' });
    const debug = new RouteDebugLog(log);
    expect(decided.hasSubscribers).toBe(before);
    log.level = 'debug';
    expect(decided.hasSubscribers).toBe(true);
    const request = { host: 'x.test', path: '/p', clientIp: '2001:db8::1', clientPort: 5000 };
    decided.publish({ request, candidates: undefined, listener: 'web' });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      level: 'debug',
      msg: 'route',
      listener: 'web',
      client: '[2001:db8::1]:5000',
      host: 'x.test',
      path: '/p',
      result: 'no_route',
    });
    log.level = 'info';
    const n = lines.length;
    decided.publish({ request, candidates: undefined, listener: 'web' });
    expect(lines).toHaveLength(n);
    debug.close();
    expect(decided.hasSubscribers).toBe(before);
  });
});
