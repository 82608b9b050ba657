/**
 * The value `peekHttp1` returns (http1.ts `Http1Head`): a validated request head whose field
 * lines stay one string until something asks for them as pairs.
 */

import type { HeaderPair, RequestBodyFraming } from './http1-fields.ts';
import type { Http1Head } from './http1-types.ts';

/**
 * A parsed head. The field lines are kept as one latin1 string (`fields`, CRLF-separated, as
 * sent) and split into `headers` only when something asks: routing on host and path, the body
 * framing and the cross-check need no string per field (issue 18).
 */
export class ParsedHead implements Http1Head {
  readonly method: string;
  readonly target: string;
  readonly versionMinor: 0 | 1;
  readonly host: string;
  readonly port: number | undefined;
  readonly path: string | undefined;
  readonly query: string;
  readonly headLength: number;
  readonly bodyFraming: RequestBodyFraming;
  readonly upgrade: boolean;
  readonly upgradeTo: readonly string[];
  readonly connectionClose: boolean;
  readonly expectContinue: boolean;
  /** The field lines, checked, without the final empty line ('' when there are none). */
  readonly fields: string;
  #headers: HeaderPair[] | undefined;

  constructor(
    method: string,
    target: string,
    versionMinor: 0 | 1,
    host: string,
    port: number | undefined,
    path: string | undefined,
    query: string,
    headLength: number,
    bodyFraming: RequestBodyFraming,
    upgrade: boolean,
    upgradeTo: readonly string[],
    connectionClose: boolean,
    expectContinue: boolean,
    fields: string,
  ) {
    this.method = method;
    this.target = target;
    this.versionMinor = versionMinor;
    this.host = host;
    this.port = port;
    this.path = path;
    this.query = query;
    this.headLength = headLength;
    this.bodyFraming = bodyFraming;
    this.upgrade = upgrade;
    this.upgradeTo = upgradeTo;
    this.connectionClose = connectionClose;
    this.expectContinue = expectContinue;
    this.fields = fields;
  }

  get headers(): readonly HeaderPair[] {
    this.#headers ??= splitFields(this.fields);
    return this.#headers;
  }
}

/** [name, value] of each (checked) field line of `fields`, values without surrounding OWS. */
function splitFields(fields: string): HeaderPair[] {
  const out: HeaderPair[] = [];
  if (fields === '') return out;
  for (let from = 0; from <= fields.length; ) {
    let to = fields.indexOf('\r\n', from);
    if (to === -1) to = fields.length;
    const colon = fields.indexOf(':', from);
    let a = colon + 1;
    let b = to;
    while (a < b && isOws(fields.charCodeAt(a))) a++;
    while (b > a && isOws(fields.charCodeAt(b - 1))) b--;
    out.push([fields.slice(from, colon), fields.slice(a, b)]);
    from = to + 2;
  }
  return out;
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}
