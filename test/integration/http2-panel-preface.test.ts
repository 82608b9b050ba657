/**
 * An invalid connection preface on a plaintext listener of the http2 panel (issue 40 item 6,
 * h2spec 3.5/2): bytes that cannot be HTTP/1 are answered GOAWAY PROTOCOL_ERROR and closed
 * (RFC 9113 §3.4), not with the HTTP/1 fallback's 400; HTTP/1.1 and a valid preface still pass.
 */
import { connect as netConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goawayCode } from '../fixtures/h2/build.ts';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';

const PANELS = [
  { label: 'http2', panel: 'http2' },
  { label: 'worker/http2', panel: { name: 'worker', threads: 1, engine: 'http2' } },
] as const;

/** Sends `bytes` and collects the reply until the router closes (bounded). */
function exchange(port: number, bytes: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    const s = netConnect({ port, host: '127.0.0.1' }, () => s.write(Buffer.from(bytes, 'latin1')));
    s.on('data', (d: Buffer) => got.push(d));
    s.on('error', () => {});
    s.on('close', () => resolve(Buffer.concat(got)));
    setTimeout(() => s.destroy(), 5_000).unref();
  });
}

describe.each(PANELS)('http2 panel: invalid connection preface ($label)', ({ label, panel }) => {
  let web: TestBackend;
  let router: TestRouter;

  beforeAll(async () => {
    web = await startHttpBackend('web');
    router = await startTestRouter(
      { panel, addressBook: { name: 'file', path: 'servers.yaml' } },
      { dir: await tempDir({ 'servers.yaml': `- { host: "*", backends: [${web.address}] }\n` }) },
    );
  });
  afterAll(async () => {
    await router.close();
    await web.close();
  });

  const CASES = [
    // RFC 9113 §3.4: the preface with its last byte wrong (what the brief of issue 40 names).
    { name: 'the preface with a wrong last byte', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\rX' },
    // h2spec 3.5/2 sends this line: no method node's HTTP/1 server takes.
    { name: "h2spec 3.5/2's invalid preface", bytes: 'INVALID CONNECTION PREFACE\r\n\r\n' },
    { name: 'binary bytes', bytes: '\x00\x01\x02\x03\x04\x05\x06\x07' },
  ];
  for (const c of CASES) {
    it(`${c.name}: GOAWAY PROTOCOL_ERROR and a close, no HTTP/1 answer`, async () => {
      const reply = await exchange(router.port(), c.bytes);
      expect(reply.subarray(0, 5).toString('latin1')).not.toBe('HTTP/');
      expect(goawayCode(reply)).toBe(0x1);
      expect(web.hits).toBe(0);
      if (label === 'http2') {
        const line = router.access.find((a) => a.reason?.includes('invalid connection preface'));
        expect(line?.result).toBe('bad_request');
      }
    });
  }

  it('HTTP/1.1 (after an empty line too) is still served', async () => {
    const reply = await exchange(router.port(), '\r\nGET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n');
    expect(reply.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
  });
});
