/**
 * Differential checks of our HTTP/1 head parser against independent oracles (issue 13 §1):
 * whatever we accept, Node's strict `http` server and HAProxy 2.6 in HTTP mode must accept too,
 * and read with the same target, Host and body framing; whatever they reject, we reject. Each
 * oracle is fed the exact bytes over a real loopback socket and echoes what it parsed in headers.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Http1Head } from '../../src/peek/http1.ts';
import { freePort, type Haproxy, haproxyAvailable, startHaproxy } from '../harness/haproxy.ts';
import { framingOf, normaliseHost, ours, requestHead, runs, timeoutFor } from './fuzz.ts';

/** What an oracle made of a head: rejected, or the fields it echoed back. */
type Oracle =
  | { readonly ok: false; readonly status: number }
  | { readonly ok: true; readonly seen: Record<string, string> };

/** Sends `bytes` to 127.0.0.1:port and reads the response head (or the close). */
function ask(port: number, bytes: Buffer): Promise<Oracle> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let data = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      s.destroy();
      const end = data.indexOf('\r\n\r\n');
      const lines = data.slice(0, end === -1 ? data.length : end).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      if (status !== 200) return resolve({ ok: false, status });
      const seen: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (l.toLowerCase().startsWith('x-seen-')) seen[l.slice(7, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ ok: true, seen });
    };
    s.on('data', (c: Buffer) => {
      data += c.toString('latin1');
      // An interim 1xx (100 Continue) is not the verdict: drop it and wait for the final one.
      while (/^HTTP\/1\.[01] 1\d\d /.test(data) && data.includes('\r\n\r\n'))
        data = data.slice(data.indexOf('\r\n\r\n') + 4);
      if (data.includes('\r\n\r\n')) finish();
    });
    s.on('error', finish);
    s.on('close', finish);
    s.setTimeout(3000, finish);
    s.on('connect', () => s.write(bytes));
  });
}

/** Node's strict parser (insecureHTTPParser off), echoing what it parsed as x-seen-* headers. */
async function startNodeOracle(): Promise<{ server: Server; port: number }> {
  const server = createServer({ insecureHTTPParser: false }, (req, res) => {
    const h = req.headers;
    res.writeHead(200, {
      'x-seen-target': encodeURIComponent(req.url ?? ''),
      'x-seen-host': encodeURIComponent(String(h.host ?? '')),
      'x-seen-te': encodeURIComponent(String(h['transfer-encoding'] ?? '')),
      'x-seen-cl': encodeURIComponent(String(h['content-length'] ?? '')),
      'content-length': 0,
      connection: 'close',
    });
    res.end();
    req.socket.destroySoon();
  });
  server.on('clientError', (_e, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Our head's framing seen through an oracle's Transfer-Encoding / Content-Length echo. */
function oracleFraming(te: string, cl: string): string {
  if (te !== '' && te !== '0') return 'chunked';
  if (cl !== '' && Number(cl) > 0) return `length:${Number(cl)}`;
  return 'none';
}

/** The host an oracle saw: its Host echo, or (HTTP/1.0 absolute-form without Host) the target's. */
function oracleHost(echoed: string | undefined, target: string): string {
  if ((echoed ?? '') === '' && /^http:\/\//.test(target)) return normaliseHost(target.slice(7).split('/')[0] ?? '');
  return normaliseHost(echoed ?? '');
}

describe('HTTP/1 heads: Node strict http parser as the oracle', () => {
  let node: { server: Server; port: number };
  beforeAll(async () => {
    node = await startNodeOracle();
  });
  afterAll(async () => {
    node.server.closeAllConnections();
    await new Promise((r) => node.server.close(r));
  });

  it(
    'what we accept, Node accepts with the same target, Host and framing (RFC 9112 §3, §6.3; §3 rows 1–13)',
    async () => {
      await fc.assert(
        fc.asyncProperty(requestHead, async (bytes) => {
          const v = ours(bytes);
          if (!('head' in v)) return;
          const o = await ask(node.port, bytes);
          const where = JSON.stringify(bytes.toString('latin1'));
          expect(o.ok, `node rejected ${where} (${o.ok ? '' : o.status})`).toBe(true);
          if (!o.ok) return;
          const seen = Object.fromEntries(Object.entries(o.seen).map(([k, x]) => [k, decodeURIComponent(x)]));
          expect(seen.target, where).toBe(v.head.target);
          expect(oracleHost(seen.host, v.head.target), where).toBe(v.head.host);
          expect(oracleFraming(seen.te ?? '', seen.cl ?? ''), where).toBe(framingOf(v.head));
        }),
        { numRuns: runs(400) },
      );
    },
    timeoutFor(400),
  );
});

/**
 * The one documented divergence from HAProxy: an absolute-form authority and a Host that differ
 * only by a trailing dot name the same host after DESIGN's normalisation (we route both alike and
 * so does every backend that strips the dot); HAProxy compares the raw text and refuses.
 */
function trailingDotOnly(head: Http1Head): boolean {
  if (!/^https?:\/\//i.test(head.target)) return false;
  const host = head.headers.find(([n]) => n.toLowerCase() === 'host')?.[1] ?? '';
  const authority = head.target.replace(/^https?:\/\//i, '').split('/')[0] ?? '';
  return (
    host.toLowerCase() !== authority.toLowerCase() &&
    host.replace(/\.(?=$|:)/, '').toLowerCase() === authority.toLowerCase()
  );
}

describe.skipIf(!haproxyAvailable())('HTTP/1 heads: HAProxy 2.6 in HTTP mode as the oracle', () => {
  let haproxy: Haproxy;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    haproxy = await startHaproxy(
      [
        'frontend swb_oracle',
        `  bind 127.0.0.1:${port}`,
        '  mode http',
        '  http-request return status 200 hdr x-seen-path "%[path,url_enc]" hdr x-seen-host "%[req.hdr(host),url_enc]" hdr x-seen-te "%[req.hdr_cnt(transfer-encoding)]" hdr x-seen-cl "%[req.hdr(content-length)]"',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await haproxy?.close();
  });

  it(
    'what we accept, HAProxy accepts with the same path, Host and framing (§3 rows 1–13)',
    async () => {
      await fc.assert(
        fc.asyncProperty(requestHead, async (bytes) => {
          const v = ours(bytes);
          if (!('head' in v) || trailingDotOnly(v.head)) return;
          const o = await ask(port, bytes);
          const where = JSON.stringify(bytes.toString('latin1'));
          expect(o.ok, `haproxy rejected ${where} (${o.ok ? '' : o.status})`).toBe(true);
          if (!o.ok) return;
          const seen = Object.fromEntries(Object.entries(o.seen).map(([k, x]) => [k, decodeURIComponent(x)]));
          const target = v.head.target;
          if (target.startsWith('/')) expect(seen.path, where).toBe(target.split('?')[0]);
          expect(oracleHost(seen.host, v.head.target), where).toBe(v.head.host);
          expect(oracleFraming(seen.te ?? '', seen.cl ?? ''), where).toBe(framingOf(v.head));
        }),
        { numRuns: runs(400) },
      );
    },
    timeoutFor(400),
  );
});
