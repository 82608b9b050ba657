/**
 * The HTTP/2 floor (issue 18, row `node-h2-proxy`): a minimal node:http2 proxy,
 * `node h2-proxy-server.ts PORT BACKEND_PORT`. One h2c server, one pooled h2c session to the
 * backend (re-dialled when it closes), each client stream forwarded as one upstream stream with
 * the client's headers, the response head passed back and both bodies piped. Default options
 * everywhere, errors reset the other side. Do not tune this file: it is the baseline the http2
 * panel must beat, as `pipe-server.ts` is for HTTP/1.
 */
import { type ClientHttp2Session, connect, constants, createServer } from 'node:http2';

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR } = constants;

let session: ClientHttp2Session | undefined;
function upstream(): ClientHttp2Session {
  if (session === undefined || session.closed || session.destroyed) {
    const s = connect(`http://127.0.0.1:${backendPort}`);
    s.on('error', () => {});
    s.on('close', () => {
      if (session === s) session = undefined;
    });
    session = s;
  }
  return session;
}

const server = createServer();
server.on('stream', (down, headers) => {
  let up: ReturnType<ClientHttp2Session['request']>;
  try {
    up = upstream().request(headers, { endStream: down.endAfterHeaders });
  } catch {
    down.close(NGHTTP2_INTERNAL_ERROR);
    return;
  }
  up.on('response', (head) => down.respond(head));
  up.pipe(down);
  if (!down.endAfterHeaders) down.pipe(up);
  up.on('error', () => down.close(NGHTTP2_INTERNAL_ERROR));
  down.on('error', () => up.close(NGHTTP2_CANCEL));
  down.on('close', () => {
    if (!up.closed) up.close(NGHTTP2_CANCEL);
  });
});
server.listen({ host: '127.0.0.1', port, backlog: 4096 });
process.on('SIGTERM', () => process.exit(0));
