/**
 * Who may call the admin listener. Every request goes through `refusal()` before its handler:
 *
 * 1. Open paths (`admin.open`, default `GET /healthz` and `GET /readyz`) pass: probes and
 *    scrapers need no token and may use any Host.
 * 2. `Host` must name the listener the way only a local or intended client would: an IP literal,
 *    `localhost`, or a name of `admin.allowedHosts`. A DNS-rebinding page can only send its own
 *    DNS name, so this stops it even on loopback. → 403 `host_not_allowed`.
 * 3. Mutating calls (every method but GET) refuse what a browser sends cross-site: an `Origin`
 *    other than the listener's own (`http(s)://<Host>`), `Origin: null`, or `Sec-Fetch-Site`
 *    other than `same-origin`/`none`. → 403 `cross_origin`.
 * 4. The token: `admin.token`, else `SWITCHBOARD_ADMIN_TOKEN` (read on every call, so a reload
 *    can change it). With one, the call needs `Authorization: Bearer <token>`, compared in
 *    constant time (sha256 of both, so not even the length leaks). Without one, the call passes
 *    only when the admin address is loopback. → 401 `unauthorized`.
 * 5. Mutating calls need `Content-Type: application/json`: a browser cannot send it cross-site
 *    without a CORS preflight, which this listener never grants. → 415 `unsupported_media_type`.
 *
 * The dashboard's shell (`shell`: the static files of `/ui`, which hold no data) passes steps 2
 * and 4's no-token rule like any path but not the token check itself: the page must load before
 * it can ask for the token. Its data endpoints are ordinary paths.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { ResultCode } from '../../src/base/errors.ts';

const loopbacks = new BlockList();
loopbacks.addSubnet('127.0.0.0', 8, 'ipv4');
loopbacks.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8, ::1 (any spelling, IPv4-mapped too) and `localhost`. */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && loopbacks.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

/** The token in effect: config first, then the environment; '' when neither sets one. */
export function adminToken(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (configured !== undefined && configured !== '') return configured;
  return env.SWITCHBOARD_ADMIN_TOKEN ?? '';
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Whether `authorization` is `Bearer <token>` (scheme case-insensitive), in constant time. */
export function tokenMatches(authorization: string | undefined, token: string): boolean {
  if (token === '' || authorization === undefined) return false;
  const space = authorization.indexOf(' ');
  if (space < 0 || authorization.slice(0, space).toLowerCase() !== 'bearer') return false;
  return timingSafeEqual(digest(authorization.slice(space + 1).trim()), digest(token));
}

/** The host name of a `Host` value (`name`, `name:port`, `[v6]:port`), lower case; undefined when malformed. */
export function hostNameOf(value: string): string | undefined {
  let name: string;
  let rest: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    name = value.slice(1, end);
    if (isIP(name) !== 6) return undefined;
    rest = value.slice(end + 1);
  } else {
    const colon = value.indexOf(':');
    name = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? '' : value.slice(colon);
  }
  if (name === '' || (rest !== '' && !/^:\d{1,5}$/.test(rest))) return undefined;
  return name.toLowerCase();
}

/** What the checks read, rebuilt per request from the running config (a reload changes it). */
export interface AdminPolicy {
  /** The token in effect ('' = none). */
  readonly token: string;
  /** The admin listener is bound to a loopback address. */
  readonly loopback: boolean;
  /** The bound address, for messages. */
  readonly address: string;
  /** Read paths served to anyone (`admin.open`). */
  readonly open: readonly string[];
  /** DNS names accepted in `Host` besides IP literals and `localhost`. */
  readonly allowedHosts: readonly string[];
  /** GET paths that need no token (still the Host check): the dashboard's static shell. */
  readonly shell?: readonly string[] | undefined;
}

/** The part of a request the checks read: `headers` as `IncomingMessage.headersDistinct`. */
export interface AdminRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: NodeJS.Dict<string[]>;
}

/** Why a request is refused: the status, the `X-Switchboard-Error` code and a message. */
export interface Refusal {
  readonly status: number;
  readonly code: ResultCode;
  readonly message: string;
}

/** The one value of header `name`; undefined when absent, null when sent more than once. */
function single(req: AdminRequest, name: string): string | undefined | null {
  const values = req.headers[name];
  if (values === undefined) return undefined;
  return values.length === 1 ? values[0]! : null;
}

function hostAllowed(host: string | undefined | null, policy: AdminPolicy): boolean {
  if (host === undefined || host === null) return false;
  const name = hostNameOf(host);
  if (name === undefined) return false;
  return isIP(name) !== 0 || name === 'localhost' || policy.allowedHosts.includes(name);
}

/** Why a mutating call looks cross-site, or undefined when it does not. */
function crossOrigin(req: AdminRequest, host: string): string | undefined {
  const site = single(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `Sec-Fetch-Site ${JSON.stringify(site)}`;
  }
  const origin = single(req, 'origin');
  if (origin === undefined) return undefined;
  if (origin === null) return 'more than one Origin';
  let url: URL;
  let own: string;
  try {
    url = new URL(origin);
    own = new URL(`http://${host}`).host;
  } catch {
    return `Origin ${JSON.stringify(origin)}`;
  }
  const sameOrigin =
    (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin.toLowerCase() && url.host === own;
  return sameOrigin ? undefined : `Origin ${JSON.stringify(origin)}`;
}

function isJson(contentType: string | undefined | null): boolean {
  if (typeof contentType !== 'string') return false;
  return contentType.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** Why `req` may not proceed, or undefined when it may (steps 1–5 of the header). */
export function refusal(req: AdminRequest, policy: AdminPolicy): Refusal | undefined {
  const mutating = req.method !== 'GET';
  if (!mutating && policy.open.includes(req.path)) return undefined;

  const host = single(req, 'host');
  if (!hostAllowed(host, policy)) {
    return {
      status: 403,
      code: 'host_not_allowed',
      message:
        `admin: Host ${host === null ? '(sent twice)' : JSON.stringify(host ?? '')} is not allowed: ` +
        'use an IP address or localhost, or list the name in admin.allowedHosts',
    };
  }
  if (mutating) {
    const why = crossOrigin(req, host!);
    if (why !== undefined) {
      return { status: 403, code: 'cross_origin', message: `admin: cross-origin ${req.method} refused (${why})` };
    }
  }
  if (policy.token === '') {
    if (!policy.loopback) {
      return {
        status: 401,
        code: 'unauthorized',
        message:
          `admin: no token is set (admin.token or SWITCHBOARD_ADMIN_TOKEN) and ${policy.address} is not loopback: ` +
          `only ${policy.open.join(', ') || 'nothing'} is served without one`,
      };
    }
  } else if (
    !(!mutating && policy.shell?.includes(req.path) === true) &&
    !tokenMatches(single(req, 'authorization') ?? undefined, policy.token)
  ) {
    return {
      status: 401,
      code: 'unauthorized',
      message: 'admin: missing or wrong bearer token (Authorization: Bearer <admin.token or SWITCHBOARD_ADMIN_TOKEN>)',
    };
  }
  if (mutating && !isJson(single(req, 'content-type'))) {
    return {
      status: 415,
      code: 'unsupported_media_type',
      message: `admin: ${req.method} ${req.path} needs Content-Type: application/json`,
    };
  }
  return undefined;
}
