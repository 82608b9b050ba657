/**
 * The HTTP/2 sessions of one upstream pool key (upstream-h2.ts), and their stream slots.
 *
 *   key ──► SessionGroup ── sessions [s1: 100/100] [s2: 37/100] …  ≤ limits.maxUpstreamSessionsPerBackend
 *                        └─ waiters  (FIFO, each bounded by connectTimeout → 503 overloaded)
 *
 * 1. A stream takes a slot on the first session below the peer's SETTINGS_MAX_CONCURRENT_STREAMS
 *    (`take`); the common case is one session with room, one check.
 * 2. When every session is full, a stream may make the group grow by one session (one dial at a
 *    time), while the group is under its maximum and the stream's client connection holds less
 *    than half a session's worth of upstream streams (`underShare`): a few client connections
 *    that hold their streams open cannot make the group grow for themselves alone.
 * 3. Otherwise the stream waits in the group's queue; a slot freed on any session of the group
 *    (a stream closed, a new session settled) goes to the oldest waiter. A waiter not served
 *    within the wait's bound is refused with a `ConnectError` marked `exhausted` (the router's
 *    own shortage: 503 `overloaded`, gRPC UNAVAILABLE, not held against the backend).
 * 4. A session stops taking streams (`drain`) when it received GOAWAY, errored, closed, or its
 *    next stream id would pass `maxStreamId` (RFC 9113 §5.1.1: ids are never reused): it leaves
 *    the group, its open streams finish, and the next stream gets a new session.
 */
import type { ClientHttp2Session, Settings } from 'node:http2';
import { ConnectError } from '../../src/upstream/connect.ts';
import type { StreamCounter } from './h2-exchange.ts';

/** The largest stream id (RFC 9113 §5.1.1: 31 bits). */
export const MAX_STREAM_ID = 2 ** 31 - 1;

/**
 * The largest client stream id the pool opens on one session before it takes a new one:
 * MAX_STREAM_ID, or for tests a smaller odd number from `SWITCHBOARD_TEST_H2_MAX_STREAM_ID`
 * (read once at load; worker threads inherit the environment), so that running out of ids
 * needs a handful of requests instead of 2^30.
 */
export const maxStreamId: number = streamIdLimit(process.env.SWITCHBOARD_TEST_H2_MAX_STREAM_ID);

function streamIdLimit(text: string | undefined): number {
  const n = text === undefined ? Number.NaN : Number(text);
  return Number.isInteger(n) && n >= 1 && n <= MAX_STREAM_ID ? n : MAX_STREAM_ID;
}

/** What node assumes for a peer that announced no limit (RFC 9113 §6.5.2: unlimited). */
const UNLIMITED = 2 ** 32 - 1;

/** Upstream streams in flight per client connection, in a slot of its socket. */
const kInFlight = Symbol('switchboard.http2.upstreamStreams');
type Counted = object & { [kInFlight]?: number };

/** Upstream h2 streams in flight for `client` (a client connection's socket). */
export function inFlightOf(client: object | undefined): number {
  return client === undefined ? 0 : ((client as Counted)[kInFlight] ?? 0);
}

function count(client: object | undefined, by: number): void {
  if (client !== undefined) (client as Counted)[kInFlight] = inFlightOf(client) + by;
}

const kEntry = Symbol('switchboard.http2.upstreamSession');
type Slotted = ClientHttp2Session & { [kEntry]?: UpstreamSession };

function onRemoteSettings(this: Slotted, settings: Settings): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.limit = settings.maxConcurrentStreams ?? UNLIMITED;
}

/** One pooled session: its stream slots and the stream ids it has used. */
export class UpstreamSession implements StreamCounter {
  readonly session: ClientHttp2Session;
  readonly #group: SessionGroup;
  /** Streams open (or reserved for a stream about to open). */
  active = 0;
  /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS (node's assumption until its SETTINGS arrive). */
  limit = 100;
  /** Stream ids taken so far (a reserved slot takes one): the last id is 2 × opened − 1. */
  opened = 0;
  draining = false;

  constructor(session: ClientHttp2Session, group: SessionGroup) {
    this.session = session;
    this.#group = group;
    (session as Slotted)[kEntry] = this;
    session.on('remoteSettings', onRemoteSettings);
  }

  /** A free slot for one more stream. */
  hasRoom(): boolean {
    return this.active < this.limit && !this.draining && !this.session.closed && !this.session.destroyed;
  }

  /** The slot reserved for `client` was not used (the stream could not be opened). */
  unreserve(client: object | undefined): void {
    this.streamClosed(client);
  }

  streamClosed(client: object | undefined): void {
    this.active--;
    count(client, -1);
    if (this.draining) this.closeIfIdle();
    else this.#group.serve();
  }

  /** GOAWAY once a draining session has no stream left (reserved slots are still opened first). */
  closeIfIdle(): void {
    const session = this.session;
    if (this.active === 0 && !session.closed && !session.destroyed) session.close();
  }

  outOfStreams(): void {
    this.#group.drain(this);
  }
}

interface Waiter {
  readonly client: object | undefined;
  readonly resolve: (s: UpstreamSession) => void;
  readonly timer: NodeJS.Timeout;
}

/** The sessions of one pool key, their queue of waiting streams and their one dial in flight. */
export class SessionGroup {
  readonly sessions: UpstreamSession[] = [];
  /** `limits.maxUpstreamSessionsPerBackend` of the engine in use (a reload may change it). */
  max: number;
  /** The session being dialled (one at a time per group). */
  dialing: Promise<UpstreamSession> | undefined = undefined;
  readonly #waiters: Waiter[] = [];
  readonly #drained: (s: UpstreamSession) => void;

  /** `drained`: told when a session leaves the group for good (the pool closes it once idle). */
  constructor(max: number, drained: (s: UpstreamSession) => void) {
    this.max = max;
    this.#drained = drained;
  }

  /**
   * A slot on a session with room, reserved for `client` (counted in its share from now on);
   * undefined when every session is full.
   */
  take(client: object | undefined): UpstreamSession | undefined {
    const list = this.sessions;
    for (let i = 0; i < list.length; i++) {
      const s = list[i]!;
      if (s.hasRoom()) {
        s.active++;
        count(client, 1);
        // The next id would pass the limit: this slot is the session's last (it opens, then drains).
        if (2 * ++s.opened + 1 > maxStreamId) this.drain(s);
        return s;
      }
    }
    return undefined;
  }

  /** Whether a stream of `client` may make the group grow by one session now (step 2). */
  mayGrow(client: object | undefined): boolean {
    const list = this.sessions;
    if (this.dialing !== undefined || list.length >= this.max) return false;
    if (list.length === 0) return true;
    const share = Math.max(1, Math.floor(list[0]!.limit / 2));
    return inFlightOf(client) < share;
  }

  /** A new session is ready: it joins the group and serves the waiters it has room for. */
  add(s: UpstreamSession): void {
    this.sessions.push(s);
    this.serve();
  }

  /** Gives free slots to the oldest waiters. */
  serve(): void {
    const waiters = this.#waiters;
    while (waiters.length > 0) {
      const w = waiters[0]!;
      const s = this.take(w.client);
      if (s === undefined) return;
      waiters.shift();
      clearTimeout(w.timer);
      w.resolve(s);
    }
  }

  /** Waits up to `ms` for a slot for `client`; rejects with an `exhausted` ConnectError naming `what`. */
  wait(ms: number, what: string, client: object | undefined): Promise<UpstreamSession> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(
          new ConnectError(`${what}: no free upstream stream slot within ${ms}ms (${this.#state()})`, false, true),
        );
      }, ms);
      const waiter: Waiter = { client, resolve, timer };
      this.#waiters.push(waiter);
    });
  }

  #state(): string {
    const full = this.sessions.map((s) => `${s.active}/${s.limit}`).join(', ');
    return `${this.sessions.length} of ${this.max} sessions open: ${full || 'none'}`;
  }

  /** The session takes no new stream (GOAWAY, error, close, ids used up): it leaves the group. */
  drain(s: UpstreamSession): void {
    if (s.draining) return;
    s.draining = true;
    const i = this.sessions.indexOf(s);
    if (i !== -1) this.sessions.splice(i, 1);
    this.#drained(s);
  }

  /** Nothing left: no session, no dial, no waiter (the pool forgets the key). */
  empty(): boolean {
    return this.sessions.length === 0 && this.dialing === undefined && this.#waiters.length === 0;
  }
}
