/**
 * The contracts of Switchboard's three roles (DESIGN "The three roles").
 *
 *   Panel ──peek──► Request ──findAddresses──► Candidates ──findJack──► Jack | Refusal
 *
 * Every name here is fixed by DESIGN; plugins implement these interfaces and are checked with
 * `satisfies`. Both lookups are synchronous: they read immutable snapshots and never await.
 */

/** What the panel saw on the wire. */
export type Protocol = 'http1' | 'h2c' | 'h2' | 'tls';

/** Where a request's client address came from (`Request.clientFrom`). */
export type ClientFrom = 'connection' | 'proxy' | 'header';

/** TLS facts known about the client connection (passthrough: SNI/ALPN; termination: also client auth). */
export interface TlsInfo {
  /** True when a client certificate was presented and verified (termination with clientAuth). */
  readonly clientAuth: boolean;
  /** Common names of the CAs that issued the verified client chain (termination only). */
  readonly clientCaNames: readonly string[];
  /** The TLS version agreed (`TLSv1.3`), termination only; absent on hand-built requests. */
  readonly version?: string | undefined;
}

/**
 * The frozen view of one request that routing reads. Built once by a peeker; never mutated.
 * `host` is lower-cased without port or trailing dot; `path` is normalised for matching only
 * (DESIGN "What a request looks like to routing"); the forwarded bytes stay as sent.
 */
export interface Request {
  readonly protocol: Protocol;
  /** Lower-cased host (Host header, absolute-form authority, :authority or SNI); '' when absent. */
  readonly host: string;
  /** Port given in the Host header / authority, if any. */
  readonly port: number | undefined;
  /** Normalised path for matching; undefined on TLS passthrough. */
  readonly path: string | undefined;
  /** The request-target exactly as sent (HTTP) or undefined (TLS). */
  readonly target: string | undefined;
  /** The raw query string without the leading '?'; '' when absent. */
  readonly query: string;
  /** The method as sent, e.g. 'GET'; undefined on TLS passthrough. */
  readonly method: string | undefined;
  /** First value of a header, case-insensitive name; undefined when absent. */
  header(name: string): string | undefined;
  /** Every value of a header, in order. */
  headerValues(name: string): readonly string[];
  /** Value of a cookie from the Cookie header(s); undefined when absent. */
  cookie(name: string): string | undefined;
  /** Value of a query parameter (first occurrence, percent-decoded); undefined when absent. */
  queryParam(name: string): string | undefined;
  readonly sni: string | undefined;
  readonly alpn: readonly string[];
  /** The client address: the PROXY source when a trusted header gave one, else the socket peer. */
  readonly clientIp: string;
  readonly clientPort: number;
  /** The socket peer address (the L4 balancer when PROXY is in use). */
  readonly peerIp: string;
  /**
   * The connection's client address: the PROXY source when a trusted header gave one, else the
   * socket peer; never from a forwarded header (`ses_sip_range`, per-client counting).
   * Optional for hand-built requests; absent means `clientIp`.
   */
  readonly sessionIp?: string;
  readonly localIp: string;
  readonly localPort: number;
  /** The PROXY destination address, when a PROXY header carried one. */
  readonly vip: string | undefined;
  /** The PROXY destination port, when a PROXY header carried one. */
  readonly vipPort?: number | undefined;
  /** True when the client connection is TLS (terminated or passed through). */
  readonly secure: boolean;
  /** True when the client address came from a trusted source (PROXY or forwarded header). */
  readonly trustedClient: boolean;
  /**
   * Where `clientIp` came from: the socket peer (`connection`), a trusted PROXY header
   * (`proxy`: an L4 hop, which vouches for the address but not for the request's headers), or
   * a trusted hop's forwarded header (`header`: an L7 hop, `clientIpFrom: header`). Optional
   * for hand-built requests; absent means `connection`.
   */
  readonly clientFrom?: ClientFrom;
  readonly tls: TlsInfo | undefined;
  /** The name of the listener that accepted the connection. */
  readonly listener: string;
}

/** One backend as an address book lists it. `id` is the configured `host:port`. */
export interface Backend {
  readonly id: string;
  readonly host: string;
  readonly port: number;
  readonly weight: number;
  readonly name: string;
}

/** The name of the pseudo sub-cluster that drops traffic (BFE's GSLB_BLACKHOLE). */
export const BLACKHOLE = 'GSLB_BLACKHOLE';

export interface SubCluster {
  readonly name: string;
  readonly weight: number;
  readonly backends: readonly Backend[];
}

export type BalanceMode = 'wrr' | 'wlc' | 'sticky';
export type HashStrategy = 'client-ip' | 'header' | 'cookie' | 'uri';

export interface HealthCheckPolicy {
  readonly type: 'tcp' | 'http';
  readonly interval: number;
  readonly timeout: number;
  readonly failNum: number;
  readonly succNum: number;
  readonly active: boolean;
  /** HTTP checks: the request path and the expected status. */
  readonly path: string;
  readonly host: string;
  readonly statusCode: number;
}

/** The protocol the `http2` panel uses towards a cluster's backends. */
export type UpstreamProtocol = 'http1' | 'h2c' | 'h2';

/** A cluster's policy, as an address book hands it to the operator (DESIGN defaults applied). */
export interface ClusterPolicy {
  readonly balance: BalanceMode;
  readonly hash: { readonly strategy: HashStrategy; readonly key: string };
  readonly retries: number;
  readonly crossRetries: number;
  /** Milliseconds over which a recovered or new backend ramps its weight; 0 = off. */
  readonly slowStart: number;
  readonly proxyProtocol: 'off' | 'v1' | 'v2';
  readonly healthCheck: HealthCheckPolicy;
  /** How the `http2` panel speaks to this cluster's backends (splicing panels ignore it). */
  readonly protocol: UpstreamProtocol;
  /**
   * Response statuses that count as backend failures (BFE `OutlierDetectionHttpCode`, e.g.
   * `"502|503|5xx"`); '' or absent = none. Per-request routing only (src/config/outlier-status.ts).
   */
  readonly outlierStatus?: string;
  /** TLS towards the backends (absent = plain TCP); never applied to TLS passthrough traffic. */
  readonly tls?: ClusterTls | undefined;
}

/** A cluster's `tls:` key: connect to its backends over TLS. */
export interface ClusterTls {
  /** Server name to send and verify; default: the backend's hostname (none for an IP). */
  readonly sni?: string | undefined;
  /** CA bundle file (relative to the config directory); default: the system roots. */
  readonly ca?: string | undefined;
  /** Verify the backend's certificate chain and name (default true). */
  readonly verify: boolean;
}

/** What `findAddresses` returns: the backends that may serve the request. */
export interface Candidates {
  readonly product: string;
  readonly cluster: string;
  readonly policy: ClusterPolicy;
  readonly subclusters: readonly SubCluster[];
  /** Where the decision came from, for logs and `switchboard route` (e.g. a config path). */
  readonly rule: string;
}

/** One chosen backend. */
export interface Jack {
  readonly backend: Backend;
  readonly subcluster: string;
}

export type RefusalCode = 'no_backend' | 'blackhole';
export interface Refusal {
  readonly refused: RefusalCode;
}

/** The retry state the panel passes to `findJack`. The first call has number 1 and no failures. */
export interface Attempt {
  /** 1 for the first try, 2 for the first retry… */
  readonly number: number;
  /** Ids (`host:port`) of backends that already failed for this request. */
  readonly failed: ReadonlySet<string>;
  /** Sub-clusters already tried for this request, in order. */
  readonly subclusters: readonly string[];
}

export interface AddressBook {
  /** Load the first snapshot; resolves when `findAddresses` can answer. */
  start(): Promise<void>;
  /** Stop refreshing and release every handle and timer. */
  close(): Promise<void>;
  /** Synchronous lookup on the current snapshot; undefined means no route. */
  findAddresses(request: Request): Candidates | undefined;
  /** Increases by one on every snapshot swap. */
  readonly version: number;
}

/** Optional: books whose snapshot is the plain-data routing table (`/routes`, workers, export). */
export interface RoutingTableSource {
  routingTable(): unknown;
}

/** One backend of a snapshot with the cluster that lists it and that cluster's policy. */
export interface BackendEntry {
  readonly backend: Backend;
  readonly policy: ClusterPolicy;
  /**
   * The name of the cluster that lists the backend (`Candidates.cluster`): health is judged per
   * (cluster, backend). Absent (older custom books): the backend is judged as a whole.
   */
  readonly cluster?: string | undefined;
}

/** Optional: books that list every backend of their current snapshot (registry pruning, health checks). */
export interface BackendLister {
  listBackends(): Iterable<BackendEntry>;
}

/**
 * Optional, beside `BackendLister`: the same entries in groups (a cluster each) that are kept
 * from one snapshot to the next while unchanged: the same group object means the same entries,
 * so the runtime's sync after a swap touches only the groups that changed (app/runtime/backend-sync.ts).
 * Undefined: the current snapshot has no such groups.
 */
export interface BackendGroups {
  backendGroups(): readonly (readonly BackendEntry[])[] | undefined;
}

/** True when `book` implements the optional `BackendGroups`. */
export function hasBackendGroups(book: AddressBook): book is AddressBook & BackendGroups {
  return typeof (book as Partial<BackendGroups>).backendGroups === 'function';
}

/** Where a book's routes come from and the book's own version of them (issue 45 item 6). */
export interface RoutesOrigin {
  /** The book's name: `file`, `bfe`, `sqlite`, `etcd`, a custom book's. */
  readonly book: string;
  /** Where the routes are kept: a file path, a database file, an etcd prefix, `config`. */
  readonly source: string;
  /** The book's own version of what serves now: `sha256:…` of a file, `revision 42` (etcd), `change 17` (sqlite). */
  readonly version: string;
  /** When the source last changed, when the book knows it (a file's mtime, ISO 8601). */
  readonly changedAt?: string | undefined;
}

/** What a snapshot holds, by name: counted in `routes updated`, compared at debug. */
export interface RoutesInventory {
  readonly hosts: readonly string[];
  readonly products: readonly string[];
  readonly clusters: readonly string[];
  /** Backend ids (`host:port`), each once. */
  readonly backends: readonly string[];
}

/**
 * Optional: books that say where their current snapshot came from and what it holds; the
 * runtime logs `routes updated` after each swap, `/routes` and `/metrics` show the version.
 */
export interface DescribedRoutes {
  routesOrigin(): RoutesOrigin | undefined;
  routesInventory(): RoutesInventory | undefined;
}

/** True when `book` implements the optional `DescribedRoutes`. */
export function describesRoutes(book: AddressBook): book is AddressBook & DescribedRoutes {
  return typeof (book as Partial<DescribedRoutes>).routesOrigin === 'function';
}

/** True when `book` implements the optional `BackendLister`. */
export function isBackendLister(book: AddressBook): book is AddressBook & BackendLister {
  return typeof (book as Partial<BackendLister>).listBackends === 'function';
}

export interface Operator {
  findJack(request: Request, candidates: Candidates, attempt: Attempt): Jack | Refusal;
}

/** Optional operator lifecycle, detected by the runtime. */
export interface Startable {
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface Panel {
  start(): Promise<void>;
  /** Stop accepting, let connections finish within drainTimeout, then resolve. */
  close(): Promise<void>;
  /** Close everything now. */
  destroy(): void;
}

export function isRefusal(x: Jack | Refusal): x is Refusal {
  return (x as Refusal).refused !== undefined;
}
