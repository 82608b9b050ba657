/**
 * `switchboard route`: explain the routing decision for one request without sending traffic.
 * Loads the config and starts its address book, builds the Request the panel would build, and
 * prints the book's explanation (product, rule with its config path, cluster, backends) or, for
 * books without one, the candidates `findAddresses` returned. The path is normalised as the
 * listener (`--listener`, else the first) would for matching (its `pathNormalization`), and the
 * normalised path is printed, so `//admin/x` shows as `/admin/x`.
 */

import { loadConfig } from '../app/load-config.ts';
import { ConfigError } from '../src/config/errors.ts';
import type { ListenerConfig } from '../src/config/schema.ts';
import { isSwitchboardError } from '../src/errors.ts';
import { LocalRegistry } from '../src/local-registry.ts';
import { createLogger } from '../src/log.ts';
import { DEFAULT_PATH_NORMALIZATION, normalizePath, type PathNormalization } from '../src/peek/path.ts';
import { defaultRandom } from '../src/random.ts';
import { createRequest } from '../src/request.ts';
import type { AddressBook, Candidates, Request } from '../src/types.ts';

export interface RouteOptions {
  readonly config: string;
  readonly host: string;
  readonly path: string;
  readonly method: string;
  readonly header: readonly string[];
  readonly client: string;
  readonly vip?: string;
  readonly sni?: string;
  readonly alpn?: string;
  readonly json?: boolean;
  /** The listener whose `pathNormalization` applies (default: the config's first listener). */
  readonly listener?: string;
}

interface Explaining {
  explain(request: Request): unknown;
}

function hasExplain(book: AddressBook): book is AddressBook & Explaining {
  return typeof (book as Partial<Explaining>).explain === 'function';
}

/** The Request `switchboard route` asks about. Throws on a malformed header or path. */
export function requestFromOptions(
  o: RouteOptions,
  paths: PathNormalization = DEFAULT_PATH_NORMALIZATION,
  listener = 'cli',
): Request {
  const headers: [string, string][] = [['Host', o.host]];
  for (const h of o.header) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new Error(`--header ${JSON.stringify(h)}: expected NAME:VALUE`);
    headers.push([h.slice(0, colon).trim(), h.slice(colon + 1).trim()]);
  }
  const tls = o.sni !== undefined;
  const q = o.path.indexOf('?');
  const host = (o.sni ?? o.host).toLowerCase().replace(/\.$/, '');
  return createRequest({
    protocol: tls ? 'tls' : 'http1',
    host,
    path: tls ? undefined : normalizePath(q === -1 ? o.path : o.path.slice(0, q), paths),
    target: tls ? undefined : o.path,
    query: q === -1 ? '' : o.path.slice(q + 1),
    method: tls ? undefined : o.method,
    headers: tls ? [] : headers,
    sni: o.sni,
    alpn: o.alpn === undefined ? [] : o.alpn.split(',').map((s) => s.trim()),
    clientIp: o.client,
    clientPort: 0,
    localIp: '127.0.0.1',
    localPort: 0,
    vip: o.vip,
    secure: tls,
    trustedClient: false,
    listener,
  });
}

/** The listener `--listener` names, else the first; throws on an unknown name. */
function pickListener(listeners: readonly ListenerConfig[], name: string | undefined): ListenerConfig {
  if (name === undefined) return listeners[0]!;
  const found = listeners.find((l) => l.name === name);
  if (found === undefined) {
    throw new Error(`--listener ${name}: no such listener (have ${listeners.map((l) => l.name).join(', ')})`);
  }
  return found;
}

function describeCandidates(request: Request, c: Candidates | undefined): string {
  const asked = `request: host ${request.host || '(none)'} path ${request.path ?? '(none)'}`;
  if (c === undefined) return `${asked}\nno route: findAddresses returned nothing\n`;
  const lines = [asked, `product: ${c.product}`, `rule: ${c.rule}`, `cluster: ${c.cluster}`];
  for (const s of c.subclusters) {
    lines.push(
      `  sub-cluster ${s.name} (weight ${s.weight}): ${s.backends.map((b) => `${b.id} w${b.weight}`).join(', ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Returns the exit code: 0 routed, 1 no route, 2 bad config or arguments. */
export async function runRoute(o: RouteOptions): Promise<number> {
  let book: AddressBook | undefined;
  try {
    const loaded = await loadConfig(o.config);
    const context = {
      configDir: loaded.dir,
      registry: new LocalRegistry(),
      logger: createLogger('silent'),
      random: defaultRandom,
    };
    book = loaded.addressBook.factory.create(loaded.addressBook.options, context);
    await book.start();
    const listener = pickListener(loaded.config.listeners, o.listener);
    const request = requestFromOptions(o, listener.pathNormalization, listener.name);
    const candidates = book.findAddresses(request);
    const explanation = hasExplain(book) ? book.explain(request) : undefined;
    if (o.json) process.stdout.write(`${JSON.stringify(explanation ?? candidates ?? null, null, 2)}\n`);
    else if (explanation !== undefined) {
      const { formatExplanation } = await import('../address-books/bfe/index.ts');
      process.stdout.write(`${formatExplanation(explanation as Parameters<typeof formatExplanation>[0])}\n`);
    } else process.stdout.write(describeCandidates(request, candidates));
    return candidates === undefined ? 1 : 0;
  } catch (e) {
    if (e instanceof ConfigError || isSwitchboardError(e) || e instanceof Error) {
      process.stderr.write(`route: ${e.message}\n`);
      return 2;
    }
    throw e;
  } finally {
    await book?.close();
  }
}
