/**
 * HTTP/1.1 upstreams (cluster `protocol: http1`, the default): one keep-alive `http.Agent` per
 * backend, so streams from many clients reuse a few connections.
 *
 * 1. The agent's `createConnection` connects with `connectBackend` (connectTimeout, DNS
 *    included) and reports to the registry: `connected`, `connectFailed`, then `closed` when
 *    the connection closes, so `active` counts connections (idle keep-alive ones included).
 * 2. `open` creates the request and waits for its socket before resolving: until then no byte
 *    has been written, so a `ConnectError` can be retried on another backend.
 * 3. The body is chunked unless the client gave a length or sent none; response trailers come
 *    from the chunked body's trailer section.
 */
import { Agent, type ClientRequest, type ClientRequestArgs, request as httpRequest } from 'node:http';
import type { Duplex } from 'node:stream';
import type { BackendRegistry } from '../../src/backend-registry.ts';
import { ConnectError, connectBackend } from '../../src/connect.ts';
import type { Backend } from '../../src/types.ts';
import type { Exchange, ExchangeEvents } from './exchange.ts';
import { type Head, h1RequestHeaders, responseHeaders, trailerFields } from './headers.ts';

/** A keep-alive agent whose connections go through connectBackend and the registry. */
class BackendAgent extends Agent {
  readonly #backend: Backend;
  readonly #registry: BackendRegistry;
  readonly #connectTimeout: number;

  constructor(backend: Backend, registry: BackendRegistry, connectTimeout: number, idleTimeout: number) {
    super({ keepAlive: true, timeout: idleTimeout, scheduling: 'lifo' });
    this.#backend = backend;
    this.#registry = registry;
    this.#connectTimeout = connectTimeout;
  }

  override createConnection(
    _options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const { id, host, port } = this.#backend;
    const started = performance.now();
    connectBackend(host, port, this.#connectTimeout).then(
      (socket) => {
        this.#registry.connected(id, performance.now() - started);
        socket.once('close', () => this.#registry.closed(id));
        callback?.(null, socket);
      },
      (err: unknown) => {
        if (err instanceof ConnectError) this.#registry.connectFailed(id);
        callback?.(err as Error, undefined as unknown as Duplex);
      },
    );
    return undefined;
  }
}

/** Keep-alive agents, one per backend. */
export class H1Pool {
  readonly #registry: BackendRegistry;
  readonly #idleTimeout: number;
  readonly #agents = new Map<string, BackendAgent>();

  constructor(registry: BackendRegistry, idleTimeout: number) {
    this.#registry = registry;
    this.#idleTimeout = idleTimeout;
  }

  #agent(backend: Backend, connectTimeout: number): BackendAgent {
    let agent = this.#agents.get(backend.id);
    if (agent === undefined) {
      agent = new BackendAgent(backend, this.#registry, connectTimeout, this.#idleTimeout);
      this.#agents.set(backend.id, agent);
    }
    return agent;
  }

  /**
   * Sends the head of `head` to `backend` once a connection is ready. `bodyLength`: the
   * client's content-length, 0 for no body, undefined for unknown (chunked). Rejects with
   * ConnectError when no connection could be made.
   */
  open(backend: Backend, connectTimeout: number, head: Head, bodyLength: number | undefined): Promise<Exchange> {
    const headers = h1RequestHeaders(head);
    if (bodyLength === undefined) headers['transfer-encoding'] = 'chunked';
    const req = httpRequest({
      agent: this.#agent(backend, connectTimeout),
      host: backend.host,
      port: backend.port,
      method: head.method,
      path: head.target,
      headers,
      setHost: false,
    });
    return new Promise((resolve, reject) => {
      const early = (err: Error) => reject(err instanceof ConnectError ? err : new ConnectError(err.message, false));
      req.once('error', early);
      req.once('socket', () => {
        req.removeListener('error', early);
        resolve(h1Exchange(req));
      });
    });
  }

  /** Closes idle connections; busy ones close when their exchange ends. */
  close(): void {
    for (const a of this.#agents.values()) a.destroy();
    this.#agents.clear();
  }
}

/** The Exchange view of one HTTP/1.1 request. */
function h1Exchange(req: ClientRequest): Exchange {
  // Errors are reported through `listen`; this keeps one from going unhandled before that.
  req.on('error', () => {});
  return {
    body: req,
    finish(trailers) {
      if (Object.keys(trailers).length > 0) req.addTrailers(trailers);
      if (!req.writableEnded) req.end();
    },
    cancel() {
      req.destroy();
    },
    listen(events: ExchangeEvents) {
      let answered = false;
      let reported = false;
      const fail = (reason: string) => {
        if (reported) return;
        reported = true;
        events.failed(0, reason);
      };
      req.on('error', (err) => fail(`upstream: ${err.message}`));
      req.once('response', (res) => {
        answered = true;
        res.on('error', (err) => fail(`upstream: ${err.message}`));
        res.once('end', () => {
          if (reported || !res.complete) return;
          reported = true;
          events.complete(trailerFields(res.rawTrailers));
        });
        res.once('close', () => {
          if (!res.complete) fail('upstream: response truncated');
        });
        events.response({
          status: res.statusCode ?? 502,
          headers: responseHeaders(res.rawHeaders),
          body: res,
          endStream: false,
        });
      });
      req.once('close', () => {
        if (!answered) fail('upstream: connection closed before a response');
      });
    },
  };
}
