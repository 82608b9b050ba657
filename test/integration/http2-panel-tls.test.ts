/**
 * The http2 panel on a `tls: terminate` listener: ALPN h2 for HTTP/2 clients and http/1.1 for
 * HTTP/1.1 clients on the same port, certificates chosen by SNI; and an h2load sanity run on a
 * plaintext (h2c) listener.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { connect } from 'node:http2';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpBackend, type TestBackend } from '../harness/backend.ts';
import { startTestRouter, type TestRouter, tempDir } from '../harness/router.ts';
import { h2Request } from './http2-helpers.ts';

/** A self-signed certificate for `names` (openssl), written into `dir` as NAME.crt / NAME.key. */
function selfSigned(dir: string, file: string, names: string[]): string {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${names[0]}`,
      '-addext',
      `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
      '-keyout',
      join(dir, `${file}.key`),
      '-out',
      join(dir, `${file}.crt`),
    ],
    { stdio: 'ignore' },
  );
  return execFileSync('cat', [join(dir, `${file}.crt`)]).toString();
}

describe('http2 panel: TLS with ALPN h2 and HTTP/1.1 on the same listener', () => {
  let backend: TestBackend;
  let router: TestRouter;
  let caA: string;
  let caB: string;

  beforeAll(async () => {
    backend = await startHttpBackend('web');
    const dir = await tempDir({ 's.yaml': '' });
    caA = selfSigned(dir, 'a', ['a.test']);
    caB = selfSigned(dir, 'b', ['b.test']);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 's.yaml'), `- { host: "*", backends: [${backend.address}] }`);
    router = await startTestRouter(
      {
        panel: 'http2',
        listeners: [
          {
            name: 'tls',
            address: '127.0.0.1:0',
            tls: 'terminate',
            certificates: [
              { cert: 'a.crt', key: 'a.key' },
              { cert: 'b.crt', key: 'b.key' },
            ],
          },
        ],
        addressBook: { name: 'file', path: 's.yaml' },
      },
      { dir },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it.each([
    ['a.test', () => caA],
    ['b.test', () => caB],
  ])('HTTP/2 over TLS (ALPN h2), SNI %s gets its certificate', async (name, ca) => {
    const session = connect(`https://127.0.0.1:${router.port()}`, { ca: ca(), servername: name });
    try {
      const r = await h2Request(session, { ':path': '/x', ':authority': name });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body.toString())).toMatchObject({ backend: 'web', host: name, url: '/x' });
      expect((session.socket as TLSSocket).alpnProtocol).toBe('h2');
    } finally {
      session.close();
    }
    expect(router.access.some((r) => r.host === name && r.protocol === 'h2')).toBe(true);
  });

  it('HTTP/1.1 over TLS on the same port (ALPN http/1.1)', async () => {
    const { body, alpn } = await new Promise<{ body: string; alpn: string | false | null }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: router.port(),
          path: '/h1',
          servername: 'a.test',
          ca: caA,
          ALPNProtocols: ['http/1.1'],
          headers: { host: 'a.test' },
          agent: false,
        } as RequestOptions,
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ body: text, alpn: (res.socket as TLSSocket).alpnProtocol }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(alpn).toBe('http/1.1');
    expect(JSON.parse(body)).toMatchObject({ backend: 'web', url: '/h1' });
  });
});

describe('http2 panel: h2load sanity run (h2c)', () => {
  const hasH2load = spawnSync('h2load', ['--version']).status === 0;

  it.skipIf(!hasH2load)(
    'h2load -c4 -m10 -n400 completes every request with 2xx',
    async () => {
      const backend = await startHttpBackend('load');
      const router = await startTestRouter(
        { panel: 'http2', addressBook: { name: 'file', path: 's.yaml' } },
        { dir: await tempDir({ 's.yaml': `- { host: "*", backends: [${backend.address}] }` }) },
      );
      try {
        const { spawn } = await import('node:child_process');
        const out = await new Promise<string>((resolve) => {
          const child = spawn('h2load', ['-c4', '-m10', '-n400', `http://127.0.0.1:${router.port()}/load`]);
          let text = '';
          child.stdout.on('data', (c) => (text += c));
          child.on('close', () => resolve(text));
        });
        expect(out).toMatch(/requests: 400 total, 400 started, 400 done, 400 succeeded, 0 failed, 0 errored/);
        expect(out).toMatch(/status codes: 400 2xx/);
        expect(backend.hits).toBe(400);
      } finally {
        await router.close();
        await backend.close();
      }
    },
    60_000,
  );
});
