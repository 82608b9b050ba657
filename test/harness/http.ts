/**
 * Small HTTP helpers for tests: one request on a fresh connection (no keep-alive pooling).
 */
import { request as httpRequest } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** `method path` to 127.0.0.1:port with `Host: host`, on its own connection. */
export function httpGet(
  port: number,
  path = '/',
  options: { host?: string; method?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        host: '127.0.0.1',
        path,
        method: options.method ?? 'GET',
        headers: { host: options.host ?? 'www.example.test', ...options.headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
