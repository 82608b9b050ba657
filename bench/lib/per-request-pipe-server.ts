/**
 * The floor of per-request routing (issue 18, keep-alive per-request): the least a Node router
 * must do to know where every request and response of a keep-alive connection begins and ends.
 * `node per-request-pipe-server.ts PORT BACKEND_PORT`.
 *
 * - Client side: reads are gathered until the head's end (CRLFCRLF); the head goes through
 *   llhttp once (the router's WASM binding, src/peek/llhttp.ts: no strings), a refused head
 *   closes the connection; its body length is its Content-Length (a byte compare per field
 *   line); head and body are written to the upstream as they are read.
 * - The upstream: one connection per client connection, opened at the first head with noDelay
 *   and kept (what per-request routing costs when every request goes to the same backend).
 * - Response side: the response head's end and Content-Length are found the same way, and the
 *   body is counted, so the end of each response is known; bytes go to the client as they come.
 * - Backpressure as pipe() has it: a write that fills a socket pauses the other until 'drain'.
 * - No pipelining: a head that arrives before the response to the previous request is held
 *   until that response is complete (so is per-request routing's, which picks a backend per head).
 *
 * Not handled (the bench never sends them): a Transfer-Encoding or a Content-Length that is not
 * all digits closes the connection; Upgrade, 1xx, HEAD and a response without Content-Length
 * are taken as bodiless. Default options; a FIN is passed on and an error or close destroys
 * both, like pipe-server.ts. Do not tune this file: it is a floor the router is measured against.
 */
import { connect, createServer, type Socket } from 'node:net';
import { llhttpHead } from '../../src/peek/llhttp.ts';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = Buffer.from('content-length:');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding:');

/** True when the field line at [line, eol) of `head` is named `name` (lower case, with its colon). */
function named(head: Buffer, line: number, eol: number, name: Buffer): boolean {
  if (eol - line < name.length) return false;
  for (let i = 0; i < name.length; i++) if ((head[line + i]! | 0x20) !== name[i]) return false;
  return true;
}

/**
 * The Content-Length of the head [0, end) (end at its CRLFCRLF): 0 when none, -1 when the head
 * has a Transfer-Encoding or a value that is not all digits.
 */
function contentLength(head: Buffer, end: number): number {
  let length = 0;
  for (let line = head.indexOf(13) + 2; line < end; ) {
    let eol = head.indexOf(13, line);
    if (eol === -1 || eol > end) eol = end;
    if (named(head, line, eol, TRANSFER_ENCODING)) return -1;
    if (named(head, line, eol, CONTENT_LENGTH)) {
      length = 0;
      let at = line + CONTENT_LENGTH.length;
      while (head[at] === 0x20) at++;
      for (; at < eol; at++) {
        const d = head[at]! - 0x30;
        if (d < 0 || d > 9) return -1;
        length = length * 10 + d;
      }
    }
    line = eol + 2;
  }
  return length;
}

const server = createServer((c) => {
  let b: Socket | undefined;
  /** Client bytes not forwarded yet: a partial head, or what came while a response was awaited. */
  let held: Buffer | undefined;
  /** Request body bytes still to forward. */
  let requestBody = 0;
  let awaiting = false;
  /** Response side: the partial head, and body bytes still to come. */
  let responseHead: Buffer | undefined;
  let responseBody = 0;
  const destroyBoth = () => {
    c.destroy();
    b?.destroy();
  };
  c.on('error', destroyBoth);

  // Backpressure as pipe() has it: a full socket pauses the other side until its 'drain'.
  const resumeB = () => b?.resume();
  const resumeC = () => c.resume();
  const toUpstream = (bytes: Buffer) => {
    if (!b!.write(bytes)) {
      c.pause();
      b!.once('drain', resumeC);
    }
  };
  const onResponse = (chunk: Buffer) => {
    if (!c.write(chunk)) {
      b!.pause();
      c.once('drain', resumeB);
    }
    let off = 0;
    while (off < chunk.length) {
      if (responseBody > 0) {
        const n = Math.min(responseBody, chunk.length - off);
        responseBody -= n;
        off += n;
        if (responseBody === 0) done();
        continue;
      }
      const head =
        responseHead === undefined ? chunk.subarray(off) : Buffer.concat([responseHead, chunk.subarray(off)]);
      const end = head.indexOf(CRLFCRLF);
      if (end === -1) {
        responseHead = head;
        return;
      }
      const consumed = end + 4 - (responseHead?.length ?? 0);
      responseHead = undefined;
      const length = contentLength(head, end);
      if (length < 0) return destroyBoth();
      off += consumed;
      responseBody = length;
      if (length === 0) done();
    }
  };
  /** A response is complete: the next request may go. */
  const done = () => {
    awaiting = false;
    if (held !== undefined) {
      const rest = held;
      held = undefined;
      onRequest(rest);
    }
  };

  const onRequest = (chunk: Buffer) => {
    let buf = held === undefined ? chunk : Buffer.concat([held, chunk]);
    held = undefined;
    while (buf.length > 0) {
      if (requestBody > 0) {
        const n = Math.min(requestBody, buf.length);
        toUpstream(n === buf.length ? buf : buf.subarray(0, n));
        requestBody -= n;
        buf = buf.subarray(n);
        continue;
      }
      if (awaiting) {
        held = buf;
        return;
      }
      const end = buf.indexOf(CRLFCRLF);
      if (end === -1) {
        held = buf;
        return;
      }
      if (!llhttpHead('REQUEST', buf, 0, end + 4).ok) return destroyBoth();
      const length = contentLength(buf, end);
      if (length < 0) return destroyBoth();
      if (b === undefined) {
        b = connect({ host: '127.0.0.1', port: backendPort, noDelay: true });
        b.on('error', destroyBoth);
        b.on('data', onResponse);
        b.on('end', () => c.end());
        b.on('close', destroyBoth);
      }
      awaiting = true;
      const n = Math.min(end + 4 + length, buf.length);
      toUpstream(n === buf.length ? buf : buf.subarray(0, n));
      requestBody = end + 4 + length - n;
      buf = buf.subarray(n);
    }
  };
  c.on('data', onRequest);
  // A FIN is passed on, as c.pipe(b).pipe(c) does; either socket closing closes the other.
  c.on('end', () => (b === undefined ? c.end() : b.end()));
  c.on('close', destroyBoth);
});
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
