// Calls to the admin endpoints. The token lives in this module's memory only (never localStorage
// or a cookie): a new tab or a page reload asks for it again.

let token = '';

/** Sets the bearer token for the following calls ('' = none). */
export function setToken(value) {
  token = value;
}

/** The admin listener refused the token (401). */
export class Unauthorized extends Error {}

/** An error answer of the admin API: `code` is its X-Switchboard-Error. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * `path` relative to the page (`data`, `../routes`); `body` is sent as JSON (POST needs
 * `Content-Type: application/json`, which auth.ts requires against cross-site forms).
 */
export async function call(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' };
  if (token !== '') headers.authorization = `Bearer ${token}`;
  if (method !== 'GET') headers['content-type'] = 'application/json';
  const res = await fetch(new URL(path, location.href), {
    method,
    headers,
    body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
    cache: 'no-store',
    // The default credentials mode (same-origin), not 'omit': a browser keeps uncredentialed
    // requests in a socket pool of their own, so 'omit' opened up to six more connections beside
    // the page's own (Chromium held eight), against admin.maxConnectionsPerClient. The admin
    // listener sets no cookies; the token goes in Authorization.
    signal: AbortSignal.timeout(10_000),
  });
  const type = res.headers.get('content-type') ?? '';
  const data = type.includes('json') ? await res.json() : await res.text();
  if (res.status === 401) throw new Unauthorized(data?.message ?? 'unauthorized');
  if (!res.ok) throw new ApiError(res.status, data?.error ?? String(res.status), data?.message ?? String(data));
  return data;
}
