/**
 * Chunk extensions under fuzzing (issue 17 item 6, RFC 9112 §7.1.1), from the `chunkExtension`
 * generator of fuzz.ts:
 *
 * 1. BodyTracker accepts exactly the extensions the grammar allows, whatever the split of the
 *    bytes (one at a time included), and refuses the others with a typed 400.
 * 2. Differential against Node's strict parser (llhttp, over a real socket): whatever we accept
 *    without BWS, Node accepts too, so we are never the more permissive reader in front of a
 *    Node backend. (BWS is the known difference: the RFC allows it, llhttp refuses it; llhttp
 *    also accepts an empty name between two ';', which we refuse.)
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/base/errors.ts';
import { BodyTracker } from '../../src/peek/body-tracker.ts';
import { chunkExtension, runs, timeoutFor } from './fuzz.ts';

/** Our verdict on a chunked body fed `step` bytes at a time: its length, or the error code. */
function track(body: Buffer, step: number): number | string {
  const t = new BodyTracker({ kind: 'chunked' });
  let total = 0;
  try {
    for (let i = 0; i < body.length && !t.done; i += step) total += t.feed(body.subarray(0, i + step), i);
  } catch (e) {
    if (isSwitchboardError(e)) return e.code;
    throw e;
  }
  return t.done ? total : 'more';
}

const bodyWith = (ext: string) => Buffer.from(`2${ext}\r\nab\r\n0${ext}\r\n\r\n`, 'latin1');

describe('chunk extensions: grammar', () => {
  it('accepted iff well-formed, at any split', () => {
    fc.assert(
      fc.property(chunkExtension, fc.integer({ min: 1, max: 12 }), (ext, step) => {
        const body = bodyWith(ext.text);
        const verdict = track(body, step);
        expect(verdict, JSON.stringify(ext.text)).toBe(ext.valid ? body.length : 'SWB_ERR_BAD_REQUEST');
        expect(track(body, 1)).toBe(verdict);
      }),
      { numRuns: runs(2000) },
    );
  });
});

describe('chunk extensions: Node strict parser as the oracle', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer({ insecureHTTPParser: false }, (req, res) => {
      req.on('error', () => {});
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** Node's status for a chunked POST with `body` (0 when it closed without a status). */
  function nodeStatus(body: Buffer): Promise<number> {
    const head = 'POST / HTTP/1.1\r\nHost: h.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n';
    return new Promise((resolve) => {
      const s = connect({ port, host: '127.0.0.1' });
      let data = '';
      s.on('data', (c: Buffer) => {
        data += c.toString('latin1');
      });
      s.on('error', () => {});
      s.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
      s.setTimeout(3000, () => s.destroy());
      s.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    });
  }

  it(
    'what we accept without BWS, Node accepts',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          chunkExtension.filter((e) => !e.bws),
          async (ext) => {
            const body = bodyWith(ext.text);
            const ours = track(body, body.length);
            const node = await nodeStatus(body);
            if (typeof ours === 'number') expect(node, JSON.stringify(ext.text)).toBe(200);
          },
        ),
        { numRuns: runs(300) },
      );
    },
    timeoutFor(300),
  );
});
