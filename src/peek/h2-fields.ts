/**
 * Validation of the first request's decoded field list (RFC 9113 §8.2, §8.3) and extraction of
 * the routing keys. Anything malformed is a PROTOCOL_ERROR (§8.1.1: a malformed request is a
 * stream error, but before routing we have no stream to reset, so the connection is refused).
 *
 * 1. Pseudo-header fields come first; only `:method :scheme :authority :path`, each once.
 * 2. Regular names are lower-case tokens; values carry no NUL/CR/LF and no edge whitespace.
 * 3. Connection-specific fields are refused; `te` may only say `trailers` (§8.2.2).
 * 4. `:method`, `:scheme`, `:path` are required, except CONNECT (only `:authority`) (§8.5).
 * 5. The authority comes from `:authority`, else `host`; if both, they must agree. It is split
 *    into a lower-cased host without its trailing dot (IPv6 keeps its brackets) and a port.
 */
import { H2_ERROR, H2PeekError } from './h2-frames.ts';

/** The routing view of a validated request head. */
export interface H2cFields {
  readonly method: string;
  readonly scheme: string;
  readonly authority: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly host: string;
  readonly port: number | undefined;
}

const CONNECTION_SPECIFIC = new Set(['connection', 'proxy-connection', 'keep-alive', 'transfer-encoding', 'upgrade']);

/** tchar (RFC 9110 §5.6.2); `LOWER_TCHAR` excludes A-Z as RFC 9113 §8.2.1 requires for names. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
  TCHAR[c.charCodeAt(0)] = 1;
const LOWER_TCHAR = TCHAR.map((v, i) => (i >= 0x41 && i <= 0x5a ? 0 : v));

function malformed(why: string): H2PeekError {
  return new H2PeekError(H2_ERROR.PROTOCOL_ERROR, `malformed request: ${why}`);
}

function isToken(s: string, table: Uint8Array): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (table[s.charCodeAt(i)] !== 1) return false;
  return true;
}

/** Field values: no NUL, CR or LF anywhere and no SP/HTAB at either end (RFC 9113 §8.2.1). */
function checkValue(name: string, value: string): void {
  if (/[\0\r\n]/.test(value)) throw malformed(`${name}: value contains nul, cr or lf`);
  if (/^[ \t]|[ \t]$/.test(value)) throw malformed(`${name}: value has leading or trailing whitespace`);
}

/** Validates the decoded fields of the first request and extracts its routing keys. */
export function validateRequestFields(fields: readonly (readonly [string, string])[]): H2cFields {
  const pseudo = new Map<string, string>();
  const headers: Array<readonly [string, string]> = [];
  let hostHeader: string | undefined;
  for (const field of fields) {
    const [name, value] = field;
    checkValue(name || '(empty name)', value);
    if (name.startsWith(':')) {
      if (headers.length > 0) throw malformed(`pseudo-header ${name} after a regular field`);
      if (name !== ':method' && name !== ':scheme' && name !== ':authority' && name !== ':path') {
        throw malformed(`unknown pseudo-header ${name}`);
      }
      if (pseudo.has(name)) throw malformed(`duplicate ${name}`);
      pseudo.set(name, value);
      continue;
    }
    if (!isToken(name, LOWER_TCHAR)) throw malformed(`invalid field name ${JSON.stringify(name)}`);
    if (CONNECTION_SPECIFIC.has(name)) throw malformed(`connection-specific field ${name}`);
    if (name === 'te' && value.toLowerCase() !== 'trailers') throw malformed('te other than trailers');
    if (name === 'host') {
      if (hostHeader !== undefined) throw malformed('duplicate host');
      hostHeader = value;
    }
    headers.push(field);
  }
  return routingKeys(pseudo, hostHeader, headers);
}

function routingKeys(
  pseudo: Map<string, string>,
  hostHeader: string | undefined,
  headers: readonly (readonly [string, string])[],
): H2cFields {
  const method = pseudo.get(':method');
  if (method === undefined) throw malformed('missing :method');
  if (!isToken(method, TCHAR)) throw malformed(`invalid :method ${JSON.stringify(method)}`);
  const scheme = pseudo.get(':scheme');
  const path = pseudo.get(':path');
  const authorityField = pseudo.get(':authority');
  if (method === 'CONNECT') {
    if (scheme !== undefined || path !== undefined) throw malformed('connect with :scheme or :path');
    if (authorityField === undefined) throw malformed('connect without :authority');
  } else {
    if (scheme === undefined) throw malformed('missing :scheme');
    if (path === undefined) throw malformed('missing :path');
    if (!/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme)) throw malformed(`invalid :scheme ${JSON.stringify(scheme)}`);
    checkPath(method, scheme, path);
  }
  const web = scheme === undefined || scheme === 'http' || scheme === 'https';
  const authority = authorityField ?? hostHeader ?? '';
  if (authority === '' && web) throw malformed('no :authority and no host');
  const { host, port } = authority === '' ? { host: '', port: undefined } : splitAuthority(authority);
  if (authorityField !== undefined && hostHeader !== undefined) {
    const other = splitAuthority(hostHeader);
    if (other.host !== host || other.port !== port) throw malformed(':authority and host disagree');
  }
  return { method, scheme: scheme ?? '', authority, path: path ?? '', headers, host, port };
}

/** `:path` is non-empty, without spaces or controls; http(s) wants origin-form or `*` for OPTIONS. */
function checkPath(method: string, scheme: string, path: string): void {
  if (path === '') throw malformed('empty :path');
  if (/[\x00-\x20\x7f]/.test(path)) throw malformed(':path contains a space or control character');
  if ((scheme === 'http' || scheme === 'https') && !path.startsWith('/') && !(path === '*' && method === 'OPTIONS')) {
    throw malformed(`:path ${JSON.stringify(path)} is not origin-form`);
  }
}

/** Splits an authority (RFC 3986 §3.2, no userinfo: RFC 9113 §8.3.1) into normalized host and port. */
export function splitAuthority(authority: string): { host: string; port: number | undefined } {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::(\d*))?$/.exec(authority);
  if (m === null) throw malformed(`invalid authority ${JSON.stringify(authority)}`);
  let host = m[1]!.toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') throw malformed(`authority ${JSON.stringify(authority)} has no host`);
  const digits = m[2];
  if (digits === undefined || digits === '') return { host, port: undefined };
  const port = Number(digits);
  if (digits.length > 5 || port > 65535) throw malformed(`authority ${JSON.stringify(authority)}: port out of range`);
  return { host, port };
}
