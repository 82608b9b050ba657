/**
 * The top-level config schema (DESIGN "Config contract (v1)"), in zod 4: strict objects so
 * unknown keys are errors, defaults applied, durations parsed to milliseconds. The options of the
 * panel, the operator and the address book are validated by their own plugin's schema
 * (app/load-config.ts).
 */
import { z } from 'zod';
import { parseCidr } from '../base/ip.ts';
import { type AccessLogRuleConfig, accessLogSchema } from './access-log.ts';
import { listenAddress } from './address.ts';
import { duration } from './duration.ts';
import { fleetSchema } from './fleet.ts';
import { notSecret } from './not-secret.ts';
import { policiesSchema } from './policies.ts';
import { tracingSchema } from './tracing.ts';

/** The admin listener's read endpoints, the values `admin.open` may list (never `POST /reload`). */
export const ADMIN_READ_PATHS = [
  '/healthz',
  '/readyz',
  '/metrics',
  '/routes',
  '/backends',
  '/version',
  '/config',
  '/',
  '/certificates',
  '/fleet',
] as const;

/** A DNS name as it appears in a `Host` header, without port: labels of letters, digits, `-` and `_`. */
const hostName = z
  .string()
  .transform((v) => v.toLowerCase())
  .refine(
    (v) => v.length <= 253 && v.split('.').every((l) => /^[a-z0-9_-]{1,63}$/.test(l)),
    'expected a host name without port, like admin.internal',
  );

/** The admin listener (app/admin/README.md). */
export const adminSchema = z.strictObject({
  address: listenAddress.default({ host: '127.0.0.1', port: 9901 }),
  /** Bearer token for every endpoint but the open ones; env SWITCHBOARD_ADMIN_TOKEN when ''. */
  token: z.string().meta({ writeOnly: true }).default(''),
  /** Read endpoints served without the token and without the Host check (probes, scrapers). */
  open: z.array(z.enum(ADMIN_READ_PATHS)).default(['/healthz', '/readyz']),
  /** DNS names accepted in `Host` besides IP literals and `localhost` (DNS rebinding guard). */
  allowedHosts: z.array(hostName).default([]),
  /** Open admin connections, all peers together; counted in the descriptor budget (src/process/nofile.ts). */
  maxConnections: z.number().int().min(1).max(4096).default(64),
  /**
   * Open admin connections of one peer (IPv6 by limits.clientIpv6Prefix); 0 = only maxConnections.
   * 16: a browser holds up to six per host (Chromium, Firefox), so two browsers and a CLI fit.
   */
  maxConnectionsPerClient: z.number().int().min(0).default(16),
  /** A request head must arrive within this from the connection (or the previous response). */
  headersTimeout: duration.default(5_000),
  /** A whole request (head and body) must arrive within this. */
  requestTimeout: duration.default(10_000),
  /** A kept-alive connection with no new request for this long is closed. */
  idleTimeout: duration.default(15_000),
});

/** The admin deadlines: node:http refuses a head deadline past the request's, and 0 would turn a bound off. */
function checkAdminTimeouts(a: z.output<typeof adminSchema>, ctx: z.RefinementCtx): void {
  for (const key of ['headersTimeout', 'requestTimeout', 'idleTimeout'] as const)
    if (a[key] <= 0) ctx.addIssue({ code: 'custom', path: ['admin', key], message: 'expected a duration above 0' });
  if (a.headersTimeout > a.requestTimeout)
    ctx.addIssue({
      code: 'custom',
      path: ['admin', 'headersTimeout'],
      message: 'expected at most admin.requestTimeout',
    });
}

// Checked with the parser the trust checks use, so a CIDR that parses here is never dropped there.
const cidr = z.string().refine((t) => parseCidr(t) !== undefined, 'expected an IP address or CIDR like 10.0.0.0/8');

/** A listener's `acme:` section (docs/acme.md); paths relative to the config dir. */
export const acmeSchema = z.strictObject({
  directory: z
    .string()
    .url('expected the ACME directory URL, like https://acme-staging-v02.api.letsencrypt.org/directory'),
  email: z.string().email('expected a contact e-mail address').optional(),
  /** Default: the exact host names of the routing table. */
  names: z.array(hostName).optional(),
  /** Registered domains the routing table's names must equal or be under to be ordered (docs/acme.md). */
  domains: z.array(hostName).min(1).optional(),
  /** At most this many names in this section; routing-table names past it are skipped (logged). */
  maxNames: z.number().int().min(1).max(10_000).default(100),
  /** At most this many orders (new and renewals) per hour per account (directory + storage); the rest wait. */
  maxOrdersPerHour: z.number().int().min(1).max(10_000).default(20),
  challenge: z.enum(['tls-alpn-01', 'http-01']).default('tls-alpn-01'),
  storage: z.string().min(1),
  renewBefore: duration.default(30 * 86_400_000),
  /** Trust for the directory's own TLS (test servers like pebble), for this section's requests only. */
  ca: z.string().min(1).optional(),
});

export const listenerSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'expected a name of letters, digits, _ . -'),
  address: listenAddress,
  proxyProtocol: z.enum(['off', 'v1', 'v2', 'any']).default('off'),
  trustedSources: z.array(cidr).default([]),
  tls: z.enum(['off', 'passthrough', 'terminate']).default('off'),
  /** With `tls: terminate`: chosen by SNI (exact, wildcard, else the first); files relative to the config dir. */
  certificates: z
    .array(
      z.strictObject({
        cert: z.string().min(1),
        key: notSecret(z.string().min(1)),
        names: z.array(z.string().min(1)).optional(),
      }),
    )
    .default([]),
  /** With `tls: terminate`: ask clients for a certificate signed by `ca`; `required` refuses those without. */
  clientAuth: notSecret(z.strictObject({ ca: z.string().min(1), required: z.boolean().default(true) })).optional(),
  /** With `tls: terminate`: certificates obtained and renewed by the router (docs/acme.md). */
  acme: acmeSchema.optional(),
  allowConnect: z.boolean().default(false),
  /**
   * HTTP/2 with prior knowledge in cleartext (the h2c preface): `route` (the net panel hands the
   * connection to the http2 engine: every stream routed), `allow` (the net panel splices it,
   * routed by its first stream only), or `refuse` with a GOAWAY (HTTP_1_1_REQUIRED). Unset:
   * `route` with `routing: per-request`, `allow` with per-connection (`h2cModeOf`). The http2
   * panel routes every stream under `route` and `allow` alike.
   */
  h2c: z.enum(['allow', 'refuse', 'route']).optional(),
  /** connection: PROXY source or socket peer; header: a trusted hop's forwarded header (src/request/client-ip.ts). */
  clientIpFrom: z.enum(['connection', 'header']).default('connection'),
  /** The header `clientIpFrom: header` reads. */
  clientIpHeader: z.enum(['X-Forwarded-For', 'X-Real-IP']).default('X-Forwarded-For'),
  /** This listener's own cap on open connections (the global `limits.maxConnections` still applies). */
  maxConnections: z.number().int().min(1).optional(),
  /**
   * How the path routing matches on is read from the target (src/peek/path.ts); the bytes
   * forwarded never change. Defaults follow nginx: slashes merged, `%2F` read as `/`.
   */
  pathNormalization: z
    .strictObject({
      mergeSlashes: z.boolean().default(true),
      escapedSlashes: z.enum(['decode', 'reject', 'keep']).default('decode'),
    })
    .default({ mergeSlashes: true, escapedSlashes: 'decode' }),
});

/** TLS keys of a listener: terminate needs a certificate; certificates and clientAuth need terminate. */
function checkListenerTls(l: z.output<typeof listenerSchema>, i: number, ctx: z.RefinementCtx): void {
  const issue = (key: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: ['listeners', i, key], message });
  if (l.tls === 'terminate') {
    if (l.certificates.length === 0 && l.acme === undefined)
      issue('certificates', 'tls terminate needs at least one certificate (or an acme: section)');
  } else {
    if (l.acme !== undefined) issue('acme', `acme needs tls: terminate (this listener is ${l.tls})`);
    if (l.certificates.length > 0)
      issue('certificates', `certificates need tls: terminate (this listener is ${l.tls})`);
    if (l.clientAuth !== undefined) issue('clientAuth', `clientAuth needs tls: terminate (this listener is ${l.tls})`);
  }
  if (l.acme !== undefined) checkAcmeNames(l.acme, i, ctx);
}

/** `acme.names` within `maxNames` and under `domains` (routing-table names past them are skipped at run time). */
function checkAcmeNames(a: z.output<typeof acmeSchema>, i: number, ctx: z.RefinementCtx): void {
  const path = ['listeners', i, 'acme', 'names'];
  if (a.names === undefined) return;
  if (a.names.length > a.maxNames)
    ctx.addIssue({ code: 'custom', path, message: `${a.names.length} names, more than acme.maxNames (${a.maxNames})` });
  const { domains } = a;
  if (domains === undefined) return;
  for (const [j, n] of a.names.entries())
    if (!domains.some((d) => n === d || n.endsWith(`.${d}`)))
      ctx.addIssue({ code: 'custom', path: [...path, j], message: `${n} is not under acme.domains` });
}

export const limitsSchema = z.strictObject({
  peekTimeout: duration.default(10_000),
  maxHeaderBytes: z.number().int().min(1024).max(1_048_576).default(16_384),
  /**
   * Header fields one request may carry (HTTP/1 field lines; an HTTP/2 list without its
   * pseudo-headers): more is answered 431. Node backends keep 2,000, HAProxy refuses over 101.
   */
  maxHeaderCount: z.number().int().min(1).max(1_000).default(100),
  connectTimeout: duration.default(2_000),
  idleTimeout: duration.default(60_000),
  drainTimeout: duration.default(30_000),
  maxConnections: z.number().int().min(1).default(4096),
  maxConnectionsPerClient: z.number().int().min(0).default(0),
  /**
   * What one client is for maxConnectionsPerClient (and admin.maxConnectionsPerClient): an IPv4
   * address, or the first this-many bits of an IPv6 address (one host is usually given a /64).
   */
  clientIpv6Prefix: z.number().int().min(1).max(128).default(64),
  /**
   * Idle upstream connections one client connection keeps for reuse besides its current one
   * (per-request routing; least recently used closed first). Each is a descriptor counted in
   * the nofile check (src/process/nofile.ts).
   */
  maxIdleUpstreamsPerConnection: z.number().int().min(0).max(64).default(2),
  /** HTTP/2 streams a client may have open at once on one connection (SETTINGS, http2 panel). */
  maxConcurrentStreams: z.number().int().min(1).max(2_147_483_647).default(100),
  /**
   * HTTP/2 upstream sessions the http2 panel opens per backend pool key: a second one only when
   * the first is at the backend's SETTINGS_MAX_CONCURRENT_STREAMS (panels/http2/session-group.ts).
   */
  maxUpstreamSessionsPerBackend: z.number().int().min(1).max(64).default(8),
  /** After one side has finished sending, the other gets this long before both close; 0 = unbounded. */
  halfCloseTimeout: duration.default(60_000),
  /** A connection is closed this long after it was accepted, whatever it is doing; 0 = unbounded. */
  maxConnectionLifetime: duration.default(0),
});

/** `{ name, ...options }`: the options are checked later against the plugin's own schema. */
const pluginRef = (defaultName: string) =>
  z
    .union([z.string(), z.looseObject({ name: z.string().min(1) })])
    .default(defaultName)
    .transform((v) => (typeof v === 'string' ? { name: v } : v) as { name: string; [k: string]: unknown });

/**
 * `panel: NAME` or `{ name: NAME, ...options }`: the options are the panel's own (src/panel/capabilities.ts
 * `PanelFactory.options`), checked by config load (app/load-config.ts), which then replaces this
 * value with `{ name, ...parsed options }` (defaults applied).
 */
export const panelSchema = pluginRef('net');

/** The `log.level` values (and `--log-level`), most verbose first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const configSchema = z
  .strictObject({
    panel: panelSchema,
    listeners: z.array(listenerSchema).min(1, 'expected at least one listener'),
    routing: z.enum(['per-connection', 'per-request']).default('per-request'),
    limits: limitsSchema.default(limitsSchema.parse({})),
    operator: pluginRef('bfe'),
    addressBook: pluginRef('bfe'),
    admin: adminSchema.optional(),
    log: z
      .strictObject({
        level: z.enum(LOG_LEVELS).default('info'),
        /** The process log: readable lines (pretty), JSON lines (json), or pretty on a terminal (auto). */
        format: z.enum(['auto', 'pretty', 'json']).default('auto'),
        /** `stdout`, `off`, a file, or `{ file, rules }` (src/config/access-log.ts, docs/logging.md). */
        access: accessLogSchema.default('stdout'),
        /** per-connection: one line per connection; per-request: also one line per HTTP/1 request. */
        accessMode: z.enum(['auto', 'per-connection', 'per-request']).default('auto'),
        /** Access lines as JSON (json), Apache/nginx combined plus key=value (combined), or short readable lines (pretty). */
        accessFormat: z.enum(['json', 'combined', 'pretty']).default('json'),
      })
      // Consumers see the target as before (`access`) and the rules beside it (`accessRules`).
      .transform(({ access, ...rest }) =>
        typeof access === 'string'
          ? { ...rest, access, accessRules: [] as AccessLogRuleConfig[] }
          : { ...rest, access: access.file, accessRules: access.rules },
      )
      .default({
        level: 'info',
        format: 'auto',
        access: 'stdout',
        accessMode: 'auto',
        accessFormat: 'json',
        accessRules: [],
      }),
    /** Rules at the callback points, in order (src/policy/, docs/policies.md); only `connection` is enforced yet. */
    policies: policiesSchema.default([]),
    /** Several routers as one through etcd and Redis (src/config/fleet.ts, docs/fleet.md); absent = a lone router. */
    fleet: fleetSchema.optional(),
    /** OpenTelemetry spans over OTLP/HTTP (src/config/tracing.ts, docs/tracing.md); absent = no tracing. */
    tracing: tracingSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.admin !== undefined) checkAdminTimeouts(c.admin, ctx);
    const seen = new Set<string>();
    c.listeners.forEach((l, i) => {
      if (l.proxyProtocol !== 'off' && l.trustedSources.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['listeners', i, 'trustedSources'],
          message: `proxyProtocol ${l.proxyProtocol} needs trustedSources (the CIDRs allowed to send PROXY headers)`,
        });
      }
      if (l.clientIpFrom === 'header' && l.trustedSources.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['listeners', i, 'trustedSources'],
          message: 'clientIpFrom header needs trustedSources (the proxies whose forwarded headers are believed)',
        });
      }
      checkListenerTls(l, i, ctx);
      if (l.acme?.challenge === 'http-01' && !c.listeners.some((p) => p.tls === 'off')) {
        ctx.addIssue({
          code: 'custom',
          path: ['listeners', i, 'acme', 'challenge'],
          message: 'challenge http-01 needs a plaintext listener (tls: off) on this router to answer it',
        });
      }
      if (seen.has(l.name))
        ctx.addIssue({ code: 'custom', path: ['listeners', i, 'name'], message: 'duplicate listener name' });
      seen.add(l.name);
    });
  });

export type Config = z.output<typeof configSchema>;

/**
 * Whether HTTP/1 connections routed per request write one access line per request (and no
 * connection line): `log.accessMode: per-request`, or `auto` (the default) with
 * `routing: per-request`.
 */
export function writesRequestLines(config: Config): boolean {
  const mode = config.log.accessMode;
  return mode === 'per-request' || (mode === 'auto' && config.routing === 'per-request');
}
/**
 * A listener's `h2c`: as set, else `route` under `routing: per-request` (a decision per
 * request, h2c streams included) and `allow` under per-connection (routed once, as HTTP/1).
 */
export function h2cModeOf(listener: ListenerConfig, config: Config): 'allow' | 'refuse' | 'route' {
  return listener.h2c ?? (config.routing === 'per-request' ? 'route' : 'allow');
}
export type ListenerConfig = z.output<typeof listenerSchema>;
export type Limits = z.output<typeof limitsSchema>;
export type AdminConfig = z.output<typeof adminSchema>;
export type PluginRef = Config['operator'];
export type PanelRef = Config['panel'];
