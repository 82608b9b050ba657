/**
 * A plain Request for condition tests: fields set directly, headers as a name → values map,
 * cookies and query parameters derived from the Cookie header and the query string.
 */
import type { Request } from '../../src/contracts/types.ts';

/** What a test may set; everything else gets a plaintext HTTP/1.1 default. */
export interface FakeRequestInit extends Partial<Omit<Request, 'header' | 'headerValues' | 'cookie' | 'queryParam'>> {
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
}

/** Builds a Request for tests (first cookie wins, query parameters percent-decoded). */
export function fakeRequest(init: FakeRequestInit = {}): Request {
  const headers = new Map<string, readonly string[]>();
  for (const [k, v] of Object.entries(init.headers ?? {}))
    headers.set(k.toLowerCase(), typeof v === 'string' ? [v] : v);
  const query = init.query ?? '';
  const params = new URLSearchParams(query);
  const { headers: _ignored, ...fields } = init;
  return {
    protocol: 'http1',
    host: 'www.example.test',
    port: undefined,
    path: '/',
    target: '/',
    method: 'GET',
    sni: undefined,
    alpn: [],
    clientIp: '192.0.2.1',
    clientPort: 40000,
    peerIp: '192.0.2.1',
    localIp: '127.0.0.1',
    localPort: 8080,
    vip: undefined,
    secure: false,
    trustedClient: false,
    tls: undefined,
    listener: 'web',
    ...fields,
    query,
    header: (name) => headers.get(name.toLowerCase())?.[0],
    headerValues: (name) => headers.get(name.toLowerCase()) ?? [],
    cookie: (name) => {
      for (const line of headers.get('cookie') ?? []) {
        for (const pair of line.split(';')) {
          const eq = pair.indexOf('=');
          if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
        }
      }
      return undefined;
    },
    queryParam: (name) => params.get(name) ?? undefined,
  };
}
