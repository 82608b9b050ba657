/** Head scanners lent for one head at a time (src/peek/scanner-spares.ts). */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PATH_NORMALIZATION } from '../../src/peek/path.ts';
import {
  releaseHeadScanner,
  releaseResponseScanner,
  takeHeadScanner,
  takeResponseScanner,
} from '../../src/peek/scanner-spares.ts';

const b = (s: string) => Buffer.from(s, 'latin1');

describe('scanner spares', () => {
  it('lends the released request scanner again, reset, and a new one for other settings', () => {
    const a = takeHeadScanner(16384, DEFAULT_PATH_NORMALIZATION);
    expect(a.feed(b('GET / HTTP/1.1\r\nHo'))).toBeUndefined(); // half a head: state inside
    releaseHeadScanner(a);
    const again = takeHeadScanner(16384, DEFAULT_PATH_NORMALIZATION);
    expect(again).toBe(a);
    expect(again.feed(b('GET /x HTTP/1.1\r\nHost: h.test\r\n\r\n'))?.path).toBe('/x');
    releaseHeadScanner(again);
    expect(takeHeadScanner(8192, DEFAULT_PATH_NORMALIZATION)).not.toBe(a);
    // Taken: the next taker gets another one.
    const c = takeHeadScanner(16384, DEFAULT_PATH_NORMALIZATION);
    releaseHeadScanner(c);
    const d = takeHeadScanner(16384, DEFAULT_PATH_NORMALIZATION);
    expect(takeHeadScanner(16384, DEFAULT_PATH_NORMALIZATION)).not.toBe(d);
  });

  it('lends the released response scanner again, reset', () => {
    const a = takeResponseScanner(16384);
    expect(a.feed(b('HTTP/1.1 200 OK\r\nContent-Le'), 'GET')).toBeUndefined();
    releaseResponseScanner(a);
    const again = takeResponseScanner(16384);
    expect(again).toBe(a);
    expect(again.feed(b('HTTP/1.1 204 No Content\r\n\r\n'), 'GET')?.status).toBe(204);
    expect(takeResponseScanner(4096)).not.toBe(again);
  });
});
