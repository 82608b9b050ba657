/**
 * `redirect` (BFE mod_redirect SCHEME_SET / URL_SET / URL_PREFIX_ADD, HAProxy `http-request
 * redirect`, Traefik `redirectScheme`): answer 3xx with a `Location`.
 *
 *   - { name: https, use: redirect, options: { scheme: https, status: 308 } }
 *
 * 1. `url:` replaces scheme, host and path (BFE URL_SET); otherwise `scheme:`, `host:`,
 *    `port:` and `prefix:` (put before the path, BFE URL_PREFIX_ADD) change the request's own
 *    URL. The path is the one sent (percent-encoding kept), the query is kept (`query: drop`
 *    leaves it out).
 * 2. The request's scheme is the listener's: `https` on a TLS listener, else `http`. With
 *    `forwardedProto: true`, `X-Forwarded-Proto` (`http`/`https`) says it instead, but only
 *    when an L7 hop wrote it: the client address itself came from a trusted hop's forwarded
 *    header (`clientFrom: header`: listener `clientIpFrom: header`, the connection address in
 *    `trustedSources`). A PROXY sender (an L4 balancer) is trusted for the address only: the
 *    headers behind it are the client's own, so a client there cannot talk its way out of the
 *    redirect, and a redirect to HTTPS cannot loop behind a TLS-terminating L7 balancer.
 * 3. A `Location` that is the request's own URL is not answered (the rule lets it through):
 *    `scheme: https` does not fire on a TLS listener.
 * 4. `status`: 301, 302 (default), 307 or 308.
 * 5. A request without a host (HTTP/1.0 without `Host`) is not redirected unless `host:` or
 *    `url:` says where to.
 */
import { z } from 'zod';
import type { PolicyFactory, PolicyInstance, PolicyVerdict, RequestContext } from '../src/contracts/policy.ts';
import type { Request } from '../src/contracts/types.ts';
import { makeAnswer } from '../src/policy/answer.ts';

const options = z
  .strictObject({
    url: z
      .string()
      .regex(/^https?:\/\/[^\s/?#]+[^\s?#]*$/, 'expected http(s)://host/path without a query')
      .optional(),
    scheme: z.enum(['http', 'https']).optional(),
    host: z
      .string()
      .regex(/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/, 'expected a host name')
      .optional(),
    port: z.number().int().min(1).max(65535).optional(),
    prefix: z
      .string()
      .regex(/^\/[^\s?#]*$/, 'expected a path starting with /')
      .transform((p) => p.replace(/\/+$/, ''))
      .optional(),
    status: z.union([z.literal(301), z.literal(302), z.literal(307), z.literal(308)]).default(302),
    query: z.enum(['keep', 'drop']).default('keep'),
    forwardedProto: z.boolean().default(false),
  })
  .refine((o) => o.url === undefined || (o.scheme ?? o.host ?? o.port ?? o.prefix) === undefined, {
    message: 'url replaces the whole URL: leave out scheme, host, port and prefix',
  })
  .refine((o) => (o.url ?? o.scheme ?? o.host ?? o.port ?? o.prefix) !== undefined, {
    message: 'expected url, or at least one of scheme, host, port, prefix',
  });

type RedirectOptions = z.output<typeof options>;

/** The scheme the client used (step 2). */
export function requestScheme(r: Request, forwardedProto: boolean): 'http' | 'https' {
  if (forwardedProto && r.clientFrom === 'header') {
    const sent = r.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
    if (sent === 'https' || sent === 'http') return sent;
  }
  return r.secure ? 'https' : 'http';
}

/** The path as sent (no query): the origin-form target, or the path of an absolute-form one. */
function sentPath(r: Request): string {
  let target = r.target ?? r.path ?? '/';
  if (!target.startsWith('/')) {
    const slash = target.indexOf('/', target.indexOf('//') + 2);
    target = slash < 0 ? '/' : target.slice(slash);
  }
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}

/** The `redirect` policy factory. */
export const redirect = {
  name: 'redirect',
  options,
  points: ['request', 'routed'],
  create(o: RedirectOptions): PolicyInstance {
    const decide = (ctx: RequestContext): PolicyVerdict | undefined => {
      const r = ctx.request;
      // No Host (HTTP/1.0) and none configured: no Location can be built, so no redirect.
      if (r.host === '' && o.host === undefined && o.url === undefined) return undefined;
      const query = o.query === 'keep' && r.query !== '' ? `?${r.query}` : '';
      const scheme = requestScheme(r, o.forwardedProto);
      const path = sentPath(r);
      const here = `${scheme}://${r.host}${r.port === undefined ? '' : `:${r.port}`}${path}${query}`;
      let location: string;
      if (o.url !== undefined) location = `${o.url}${query}`;
      else {
        const to = o.scheme ?? scheme;
        const port = o.port ?? (o.host === undefined && to === scheme ? r.port : undefined);
        location = `${to}://${o.host ?? r.host}${port === undefined ? '' : `:${port}`}${o.prefix ?? ''}${path}${query}`;
      }
      if (location === here) return undefined;
      return { action: 'answer', answer: makeAnswer({ status: o.status, headers: { Location: location } }) };
    };
    return { request: decide, routed: decide };
  },
} satisfies PolicyFactory<RedirectOptions>;
