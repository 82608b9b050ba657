/**
 * HTTP/1.1 upstreams (cluster `protocol: http1`, the default): one bounded keep-alive agent
 * (h1-agent.ts) per pool key, so streams from many clients reuse a few connections.
 *
 * 1. The pool key is the backend, its TLS settings and, with an outbound PROXY header, the
 *    client (src/upstream/pool-key.ts): such a connection names one client, so it is private
 *    to that client's connection, as HAProxy marks it, and its pool closes when that client
 *    connection closes (private-keys.ts), not `idleTimeout` later.
 * 2. At most `maxSockets` connections per key (default `MAX_SOCKETS_PER_BACKEND`); more requests
 *    wait in the agent's queue for a free connection instead of failing.
 * 3. `open` creates the request and waits for its socket before resolving: until then no byte
 *    has been written, so a `ConnectError` can be retried on another backend.
 * 4. The body is chunked unless the client gave a length or sent none; response trailers come
 *    from the chunked body's trailer section.
 */
import { type ClientRequest, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { Backend } from '../../src/contracts/types.ts';
import { ConnectError } from '../../src/upstream/connect.ts';
import type { DialPlan } from '../../src/upstream/index.ts';
import type { Exchange, ExchangeEvents } from './exchange.ts';
import { BoundedAgent } from './h1-agent.ts';
import { type Head, h1RequestHeaders, responseHeaders, trailerFields } from './headers.ts';
import { PrivateKeys } from './private-keys.ts';

/**
 * Connections per HTTP/1 pool key (a backend, unless PROXY makes pools per client). Enough for
 * a busy backend behind one router (Envoy's default circuit breaker allows 1,024 per cluster;
 * nginx setups keep 32–128 idle per upstream), small enough that one h2 client opening
 * thousands of streams cannot exhaust descriptors: the rest queue.
 */
export const MAX_SOCKETS_PER_BACKEND = 128;

/** Bounded keep-alive agents, one per pool key. */
export class H1Pool {
  readonly #idleTimeout: number;
  readonly #maxSockets: number;
  readonly #agents = new Map<string, BoundedAgent>();
  /** Keys private to client connections (outbound PROXY): closed with the last of them. */
  readonly #private = new PrivateKeys((key) => this.#closeKey(key));

  constructor(idleTimeout: number, maxSockets = MAX_SOCKETS_PER_BACKEND) {
    this.#idleTimeout = idleTimeout;
    this.#maxSockets = maxSockets;
  }

  #agent(backend: Backend, key: string, plan: DialPlan, attempt: number): BoundedAgent {
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      const created = new BoundedAgent(backend, plan, this.#maxSockets, this.#idleTimeout, () => {
        if (this.#agents.get(key) === created) this.#agents.delete(key);
      });
      agent = created;
      this.#agents.set(key, agent);
    }
    agent.plan = plan;
    agent.attempt = attempt;
    return agent;
  }

  /**
   * Sends the head of `head` to `backend` once a connection of pool `key` is ready (made per
   * `plan` when needed). `bodyLength`: the client's content-length, 0 for no body, undefined
   * for unknown (chunked). `owner`: the client connection a private key (outbound PROXY)
   * belongs to. Rejects with ConnectError when no connection could be made.
   */
  open(
    backend: Backend,
    key: string,
    plan: DialPlan,
    attempt: number,
    head: Head,
    bodyLength: number | undefined,
    owner?: Socket,
  ): Promise<Exchange> {
    const headers = h1RequestHeaders(head);
    if (bodyLength === undefined) headers['transfer-encoding'] = 'chunked';
    const agent = this.#agent(backend, key, plan, attempt);
    if (owner !== undefined) this.#private.hold(key, owner);
    const req = httpRequest({
      agent,
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

  /** Closes the pool of `key`: idle connections now, busy ones when their exchange ends. */
  #closeKey(key: string): void {
    const agent = this.#agents.get(key);
    if (agent === undefined) return;
    this.#agents.delete(key);
    agent.destroy();
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
