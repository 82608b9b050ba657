/**
 * The "nothing lost" checker (issue 13 §5): a recording TCP backend and tracked raw clients whose
 * bytes are reconciled with the router's captured access log.
 *
 * 1. Every client connection opened through `ledger.open()` gets an id and writes `tag(id)`
 *    somewhere in its first bytes (a path segment or header the test puts there), so a backend
 *    connection can be traced back to the client connection it serves (upstream links are never
 *    shared between client connections, panels/net/upstream-pool.ts).
 * 2. The recording backend keeps, per accepted connection, every byte received and every byte
 *    it wrote; its behaviour per connection is the test's (answer, reset, stall, half-close).
 * 3. `reconcile(access)` checks, for each client connection:
 *    a. exactly one connection access line names its client port, with a result code, or (per-request
 *       access lines) its requests' lines do, the first not-ok one giving the result (a client
 *       that reset before the accept ran may be accounted for by a line naming client `unknown`);
 *    b. every backend connection linked to it received a contiguous run of the client's bytes
 *       (nothing invented, nothing reordered), and in total no more than the client sent;
 *    c. if fewer bytes reached backends than the client sent, the line's result is not `ok`
 *       (the loss has a logged reason);
 *    d. with result `ok` and a client that stayed, every byte the backends wrote reached the
 *       client, and the line's bytesIn / bytesOut equal what the client sent / received.
 *    It returns the list of violations (empty = nothing lost) so tests print them all at once.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import type { AccessRecord } from '../../src/base/log.ts';

/** What the recording backend saw on one connection. */
export interface BackendConn {
  readonly socket: Socket;
  readonly received: Buffer[];
  readonly sent: Buffer[];
  /** Concatenation of `received`. */
  receivedBytes(): Buffer;
  sentBytes(): Buffer;
}

/** A raw TCP backend recording both directions; `behave` answers (default: nothing). */
export interface RecordingBackend {
  readonly port: number;
  readonly address: string;
  readonly conns: BackendConn[];
  close(): Promise<void>;
}

/** Starts a recording backend on 127.0.0.1:0; `behave(conn)` runs for each accepted connection. */
export async function startRecordingBackend(behave?: (conn: BackendConn) => void): Promise<RecordingBackend> {
  const conns: BackendConn[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
    const received: Buffer[] = [];
    const sent: Buffer[] = [];
    const write = socket.write.bind(socket) as (chunk: Buffer | string, cb?: () => void) => boolean;
    // Records what the behaviour writes, so reconcile can compare it with what the client got.
    socket.write = ((chunk: Buffer | string, ...rest: unknown[]) => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
      sent.push(b);
      return write(b, ...(rest as [() => void]));
    }) as typeof socket.write;
    const conn: BackendConn = {
      socket,
      received,
      sent,
      receivedBytes: () => Buffer.concat(received),
      sentBytes: () => Buffer.concat(sent),
    };
    conns.push(conn);
    socket.on('data', (c: Buffer) => received.push(c));
    // Like a real server: a client FIN is answered with ours once the behaviour's writes flushed.
    socket.on('end', () => socket.end());
    behave?.(conn);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    address: `127.0.0.1:${port}`,
    conns,
    close: () => {
      for (const s of open) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** One tracked client connection. */
export interface ClientConn {
  readonly id: number;
  readonly socket: Socket;
  /** The client's local port (the access line's client port); 0 until connected. */
  port: number;
  readonly sent: Buffer[];
  readonly received: Buffer[];
  /** True once the test destroyed the socket itself (the client went away). */
  wentAway: boolean;
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>;
  /** Writes and records bytes. */
  write(bytes: Buffer | string): boolean;
  /** Destroys the socket as a client that goes away (reset). */
  abort(): void;
}

/** The marker a test puts in a connection's bytes so backends can be linked to it. */
export function tag(id: number): string {
  return `nl-${id}-nl`;
}

const TAG = /nl-(\d+)-nl/;

/** Ids are unique in the process, so backends shared by several ledgers never mix them up. */
let nextId = 1;

/** Tracks client connections and reconciles them with backends and the access log. */
export class NothingLost {
  readonly clients: ClientConn[] = [];
  readonly #backends: RecordingBackend[];

  constructor(backends: RecordingBackend[]) {
    this.#backends = backends;
  }

  /** Opens a tracked client connection to 127.0.0.1:port; resolves once connected. */
  async open(port: number): Promise<ClientConn> {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.setNoDelay(true);
    const sent: Buffer[] = [];
    const received: Buffer[] = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => {});
    socket.on('data', (c: Buffer) => received.push(c));
    // The router finished its side: finish ours too, so the connection closes (like rawRequest).
    socket.on('end', () => socket.end());
    const conn: ClientConn = {
      id: nextId++,
      socket,
      port: 0,
      sent,
      received,
      wentAway: false,
      closed,
      write(bytes) {
        const b = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
        sent.push(b);
        return socket.write(b);
      },
      abort() {
        conn.wentAway = true;
        socket.resetAndDestroy();
      },
    };
    this.clients.push(conn);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => {
        conn.port = socket.localPort ?? 0;
        resolve();
      });
      socket.once('error', reject);
    });
    return conn;
  }

  /** Backend connections whose bytes carry client `id`'s tag. */
  linked(id: number): BackendConn[] {
    const out: BackendConn[] = [];
    for (const b of this.#backends) {
      for (const c of b.conns) {
        const m = TAG.exec(c.receivedBytes().toString('latin1', 0, 4096));
        if (m !== null && Number(m[1]) === id) out.push(c);
      }
    }
    return out;
  }

  /** Every violation of the nothing-lost rules (see the file header); empty when all hold. */
  reconcile(access: readonly AccessRecord[]): string[] {
    const problems: string[] = [];
    const lines = access.filter((r) => r.line === undefined);
    // A peer that reset before the accept ran has no address any more (getpeername fails), so
    // its line names client `unknown`: such a line may account for one client that has no line.
    let anonymous = lines.filter((r) => r.client === 'unknown').length;
    for (const c of this.clients) {
      const where = `client ${c.id} (port ${c.port})`;
      const mine = lines.filter((r) => r.client.endsWith(`:${c.port}`));
      // With per-request access lines (accessMode auto + routing per-request) the requests'
      // lines account for the connection instead: its result is the first one that is not ok.
      const requests = access.filter((r) => r.line === 'request' && r.client.endsWith(`:${c.port}`));
      if (mine.length === 0 && requests.length > 0) {
        const bad = requests.find((r) => r.result !== 'ok');
        problems.push(...this.#checkBytes(c, bad ?? { ...requests[0]!, bytesIn: -1 }, where, false));
        continue;
      }
      if (mine.length === 0 && c.wentAway && anonymous > 0) {
        anonymous--;
        continue;
      }
      if (mine.length !== 1) {
        problems.push(`${where}: expected 1 access line, found ${mine.length}`);
        continue;
      }
      const record = mine[0]!;
      if (record.result === '') problems.push(`${where}: access line without a result`);
      problems.push(...this.#checkBytes(c, record, where, true));
    }
    return problems;
  }

  /** Rules b–d; `counts` says whether the line's byte counts cover the whole connection. */
  #checkBytes(c: ClientConn, record: AccessRecord, where: string, counts: boolean): string[] {
    const problems: string[] = [];
    const sent = Buffer.concat(c.sent);
    const received = Buffer.concat(c.received);
    const backs = this.linked(c.id);
    let reached = 0;
    let backendSent = 0;
    for (const b of backs) {
      const got = b.receivedBytes();
      reached += got.length;
      backendSent += b.sentBytes().length;
      if (got.length > 0 && sent.indexOf(got) === -1)
        problems.push(`${where}: a backend received ${got.length} bytes that are not a run of what the client sent`);
    }
    if (reached > sent.length)
      problems.push(`${where}: backends received ${reached} bytes, client sent ${sent.length}`);
    if (reached < sent.length && record.result === 'ok')
      problems.push(`${where}: ${sent.length - reached} client bytes never reached a backend, yet logged ok`);
    if (record.result === 'ok' && !c.wentAway) {
      if (backendSent !== received.length)
        problems.push(`${where}: backends sent ${backendSent} bytes, client received ${received.length}`);
      if (!counts) return problems;
      if (record.bytesIn !== sent.length)
        problems.push(`${where}: logged bytesIn ${record.bytesIn}, client sent ${sent.length}`);
      if (record.bytesOut !== received.length)
        problems.push(`${where}: logged bytesOut ${record.bytesOut}, client received ${received.length}`);
    }
    return problems;
  }
}
