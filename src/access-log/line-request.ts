/**
 * A finished access line seen as a `Request`, so a rule's `when:` runs BFE's condition
 * language over it: host, path, method, client address and listener come from the record;
 * everything a line does not keep (headers, cookies, query, TLS, VIP, port) reads as absent.
 * Which primitives may be used is `primitives.ts`'s list: the others are refused at config
 * load, so this view never has to answer them.
 *
 * One view per compiled rule set, pointed at each line in turn (`of`): no allocation per line.
 */
import type { AccessRecord } from '../base/log.ts';
import type { Protocol, Request, TlsInfo } from '../contracts/types.ts';

const NONE: readonly string[] = [];

/** The client address of `client` (`ip:port`, IPv6 unbracketed): the text before the last colon. */
function ipOf(client: string): string {
  const colon = client.lastIndexOf(':');
  return colon < 0 ? client : client.slice(0, colon);
}

/** A reusable `Request` view over one access record at a time. */
export class LineRequest implements Request {
  #record: AccessRecord | undefined;
  #clientIp = '';

  /** Points the view at `record` and returns it. */
  of(record: AccessRecord): Request {
    this.#record = record;
    this.#clientIp = ipOf(record.client);
    return this;
  }

  get protocol(): Protocol {
    return (this.#record?.protocol ?? 'tls') as Protocol;
  }
  get host(): string {
    return this.#record?.host ?? '';
  }
  get path(): string | undefined {
    return this.#record?.path;
  }
  get method(): string | undefined {
    return this.#record?.method;
  }
  get clientIp(): string {
    return this.#clientIp;
  }
  get listener(): string {
    return this.#record?.listener ?? '';
  }
  readonly port = undefined;
  readonly target = undefined;
  readonly query = '';
  readonly sni = undefined;
  readonly alpn = NONE;
  readonly clientPort = 0;
  readonly peerIp = '';
  readonly localIp = '';
  readonly localPort = 0;
  readonly vip = undefined;
  readonly secure = false;
  readonly trustedClient = false;
  readonly tls: TlsInfo | undefined = undefined;
  header(): string | undefined {
    return undefined;
  }
  headerValues(): readonly string[] {
    return NONE;
  }
  cookie(): string | undefined {
    return undefined;
  }
  queryParam(): string | undefined {
    return undefined;
  }
}
