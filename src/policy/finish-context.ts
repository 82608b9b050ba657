/**
 * The context of the `finish` observe point (BFE HandleRequestFinish / HandleFinish): what
 * ended, the connection facts, and what was known of it when it ended (the request, the
 * product and cluster the book chose). Made by a panel only when `PolicySet.observes`, so an
 * end costs nothing when no policy observes it.
 */
import type { ConnectionFacts, FinishContext } from '../contracts/policy.ts';
import type { Request } from '../contracts/types.ts';

/** One end: the keys that were not known are absent (not `undefined`: exact optional types). */
class Finished implements FinishContext {
  readonly ended: FinishContext['ended'];
  readonly connection: ConnectionFacts;
  declare readonly request?: Request;
  declare readonly product?: string;
  declare readonly cluster?: string;

  constructor(
    ended: FinishContext['ended'],
    connection: ConnectionFacts,
    request: Request | undefined,
    product: string | undefined,
    cluster: string | undefined,
  ) {
    this.ended = ended;
    this.connection = connection;
    const self = this as { request?: Request; product?: string; cluster?: string };
    if (request !== undefined) self.request = request;
    if (product !== undefined) self.product = product;
    if (cluster !== undefined) self.cluster = cluster;
  }
}

/** The `finish` context of an end; `request`, `product`, `cluster` when known. */
export function finishContext(
  ended: FinishContext['ended'],
  connection: ConnectionFacts,
  request?: Request,
  product?: string,
  cluster?: string,
): FinishContext {
  return new Finished(ended, connection, request, product, cluster);
}
