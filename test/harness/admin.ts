/**
 * Calls to a router's admin listener as an operator's script makes them: `Host` the address,
 * the bearer token, `Content-Type: application/json` on a POST (the admin's rules, app/admin/auth.ts).
 */
import { request } from 'node:http';
import type { HttpAnswer } from './http.ts';

/** `method path` on the admin listener at 127.0.0.1:`port`, with `token` and an optional JSON body. */
export function adminCall(
  port: number,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` };
  if (method === 'POST') headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path, method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
