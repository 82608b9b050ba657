/**
 * `log.accessFormat` combined and pretty (issue 45 item 7): the lines made from access
 * records, one row per kind of line.
 */
import { describe, expect, it } from 'vitest';
import { accessLineFormatter } from '../../src/access-log/format.ts';
import { clientAddress, combinedLine, combinedTime } from '../../src/access-log/format-combined.ts';
import { prettyBytes, prettyDuration, prettyLine } from '../../src/access-log/format-pretty.ts';
import type { AccessRecord } from '../../src/base/log.ts';

const AT = new Date(Date.UTC(2026, 11, 5, 6, 7, 8, 9));
const base: AccessRecord = {
  listener: 'web',
  client: '127.0.0.1:5000',
  bytesIn: 80,
  bytesOut: 512,
  durationMs: 1.25,
  result: 'ok',
};
const request: AccessRecord = {
  ...base,
  protocol: 'http1',
  host: 'a.test',
  path: '/x',
  method: 'GET',
  status: 200,
  cluster: 'web',
  backend: '10.0.0.1:80',
};
const passthrough: AccessRecord = {
  ...base,
  protocol: 'tls',
  host: 'a.test',
  cluster: 'pass',
  backend: '10.0.0.2:443',
  secure: true,
  sni: 'a.test',
  alpn: 'h2,http/1.1',
  tls_version: 'TLSv1.3',
};
const failed: AccessRecord = {
  ...request,
  client: '::1:6000',
  status: 502,
  result: 'connect_failed',
  reason: 'connect ECONNREFUSED 10.0.0.1:80',
};

describe('combined', () => {
  it.each([
    [
      'an HTTP/1 request: the combined fields, then the router own',
      request,
      '127.0.0.1 - - [05/Dec/2026:06:07:08 +0000] "GET /x HTTP/1.1" 200 512 "-" "-" host=a.test listener=web result=ok cluster=web backend=10.0.0.1:80 durationMs=1.25 bytesIn=80',
    ],
    [
      'a passthrough connection: no request line, no status, the TLS fields',
      passthrough,
      '127.0.0.1 - - [05/Dec/2026:06:07:08 +0000] "-" - 512 "-" "-" host=a.test listener=web result=ok cluster=pass backend=10.0.0.2:443 durationMs=1.25 bytesIn=80 secure=true sni=a.test alpn=h2,http/1.1 tls_version=TLSv1.3',
    ],
    [
      'an IPv6 client and a reason with spaces (quoted)',
      failed,
      '::1 - - [05/Dec/2026:06:07:08 +0000] "GET /x HTTP/1.1" 502 512 "-" "-" host=a.test listener=web result=connect_failed reason="connect ECONNREFUSED 10.0.0.1:80" cluster=web backend=10.0.0.1:80 durationMs=1.25 bytesIn=80',
    ],
    [
      'an h2 stream',
      { ...request, protocol: 'h2' },
      '127.0.0.1 - - [05/Dec/2026:06:07:08 +0000] "GET /x HTTP/2.0" 200 512 "-" "-" host=a.test listener=web result=ok cluster=web backend=10.0.0.1:80 durationMs=1.25 bytesIn=80',
    ],
  ])('%s', (_what, record, line) => {
    expect(combinedLine(record, AT)).toBe(line);
  });

  it('writes the time in UTC, the address of ip:port', () => {
    expect(combinedTime(new Date(Date.UTC(2026, 0, 1, 0, 0, 0)))).toBe('01/Jan/2026:00:00:00 +0000');
    expect(clientAddress('[::1]:80')).toBe('[::1]');
    expect(clientAddress('')).toBe('-');
  });
});

describe('pretty', () => {
  it.each([
    [
      'a request',
      request,
      /^\d\d:\d\d:\d\d\.\d{3} 200 GET {2}a\.test\/x +1\.3ms +512B {2}127\.0\.0\.1:5000 → 10\.0\.0\.1:80 web$/,
    ],
    [
      'a failed request: its result and reason',
      failed,
      / 502 GET .* ::1:6000 → 10\.0\.0\.1:80 web connect_failed "connect ECONNREFUSED 10\.0\.0\.1:80"$/,
    ],
    [
      'a passthrough connection: its result, protocol and TLS version',
      passthrough,
      / ok {2}tls {2}a\.test .* → 10\.0\.0\.2:443 pass secure TLSv1\.3$/,
    ],
  ])('%s', (_what, record, pattern) => {
    expect(prettyLine(record, false, AT)).toMatch(pattern);
  });

  it('colours the status only when asked', () => {
    expect(prettyLine(failed, true, AT)).toContain('\u001b[31m502');
    expect(prettyLine(request, true, AT)).toContain('\u001b[32m200');
    expect(prettyLine(request, false, AT)).not.toContain('\u001b[');
  });

  it('sizes and durations', () => {
    expect([prettyBytes(999), prettyBytes(4100), prettyBytes(3_200_000)]).toEqual(['999B', '4.1kB', '3.2MB']);
    expect([prettyDuration(0.5), prettyDuration(1250)]).toEqual(['0.5ms', '1.25s']);
  });
});

describe('accessLineFormatter', () => {
  it('json is pino (no formatter); pretty is coloured only on a terminal stdout', () => {
    expect(accessLineFormatter('json', 'stdout')).toBeUndefined();
    expect(accessLineFormatter('combined', 'stdout')?.(request)).toContain('"GET /x HTTP/1.1" 200');
    const saved = process.env.NO_COLOR;
    delete process.env.NO_COLOR;
    try {
      expect(accessLineFormatter('pretty', 'stdout', true)?.(request)).toContain('\u001b[');
      expect(accessLineFormatter('pretty', '/var/log/a.log', true)?.(request)).not.toContain('\u001b[');
      expect(accessLineFormatter('pretty', 'stdout', false)?.(request)).not.toContain('\u001b[');
    } finally {
      if (saved !== undefined) process.env.NO_COLOR = saved;
    }
  });
});
