/**
 * The HTTP/2 floor (issue 18, row `node-h2-proxy`): a minimal node:http2 proxy,
 * `node h2-proxy-server.ts PORT BACKEND_PORT [TUNING_JSON]`. One h2c server, one pooled h2c
 * session to the backend (re-dialled when it closes), each client stream forwarded as one
 * upstream stream with the client's headers, the response head passed back and both bodies
 * piped. Default options everywhere, errors reset the other side. Do not tune the defaults: it
 * is the baseline the http2 panel must beat, as `pipe-server.ts` is for HTTP/1.
 *
 * TUNING_JSON (only for the floor experiment of `h2-cost.ts --tunings`, see h2-tunings.ts):
 * `{ server?, client?, sessions?, windowBytes? }`: options of `createServer` and `connect`,
 * upstream sessions used round-robin, and a session-level receive window set on both sides.
 */
import {
  type ClientHttp2Session,
  type ClientSessionOptions,
  connect,
  constants,
  createServer,
  type Http2Session,
  type ServerOptions,
} from 'node:http2';

interface Tuning {
  readonly server?: ServerOptions;
  readonly client?: ClientSessionOptions;
  readonly sessions?: number;
  readonly windowBytes?: number;
}

const port = Number(process.argv[2]);
const backendPort = Number(process.argv[3]);
const tuning: Tuning = process.argv[4] === undefined ? {} : JSON.parse(process.argv[4]);
const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR } = constants;

function widen(s: Http2Session): void {
  if (tuning.windowBytes === undefined) return;
  const w = tuning.windowBytes;
  if (s.connecting) s.once('connect', () => s.setLocalWindowSize(w));
  else s.setLocalWindowSize(w);
}

const pool: Array<ClientHttp2Session | undefined> = new Array(tuning.sessions ?? 1).fill(undefined);
let next = 0;
function upstream(): ClientHttp2Session {
  const i = next;
  next = (next + 1) % pool.length;
  const session = pool[i];
  if (session === undefined || session.closed || session.destroyed) {
    const s = connect(`http://127.0.0.1:${backendPort}`, tuning.client ?? {});
    widen(s);
    s.on('error', () => {});
    s.on('close', () => {
      if (pool[i] === s) pool[i] = undefined;
    });
    pool[i] = s;
    return s;
  }
  return session;
}

const server = createServer(tuning.server ?? {});
if (tuning.windowBytes !== undefined) server.on('session', widen);
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
