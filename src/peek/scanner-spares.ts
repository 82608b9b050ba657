/**
 * Head scanners lent for one head at a time (issue 18: what an idle connection keeps).
 *
 *   take ─► feed … (a head split across reads keeps its scanner) ─► head complete ─► release ─► spare
 *
 * A head that arrives in one read is parsed within that read, so a per-request connection (and
 * each of its upstream links) takes a scanner, parses, and gives it back: between heads it holds
 * none. One spare per kind is enough: parsing is synchronous, so the scanner released by one
 * connection is the one the next connection takes. A spare made for other settings (another
 * listener's maxHeaderBytes, pathNormalization or maxHeaderCount) is replaced by a new scanner.
 */

import { DEFAULT_MAX_HEADER_COUNT, Http1HeadScanner } from './http1.ts';
import { Http1ResponseScanner } from './http1-response.ts';
import type { PathNormalization } from './path.ts';

let spareHead: Http1HeadScanner | undefined;
let spareResponse: Http1ResponseScanner | undefined;

/** A request-head scanner at the start of a head, for these settings. */
export function takeHeadScanner(
  maxHeaderBytes: number,
  paths: PathNormalization,
  maxHeaderCount = DEFAULT_MAX_HEADER_COUNT,
): Http1HeadScanner {
  const spare = spareHead;
  if (spare?.fits(maxHeaderBytes, paths, maxHeaderCount)) {
    spareHead = undefined;
    return spare;
  }
  return new Http1HeadScanner(maxHeaderBytes, paths, maxHeaderCount);
}

/** Gives back a request-head scanner whose head is complete (reset for the next taker). */
export function releaseHeadScanner(scanner: Http1HeadScanner): void {
  scanner.reset();
  spareHead = scanner;
}

/** A response-head scanner at the start of a head. */
export function takeResponseScanner(maxHeaderBytes: number): Http1ResponseScanner {
  const spare = spareResponse;
  if (spare !== undefined && spare.maxHeaderBytes === maxHeaderBytes) {
    spareResponse = undefined;
    return spare;
  }
  return new Http1ResponseScanner(maxHeaderBytes);
}

/**
 * Gives back a response-head scanner once the head it returned has been used (that head object
 * is the scanner's own and is overwritten by its next taker).
 */
export function releaseResponseScanner(scanner: Http1ResponseScanner): void {
  scanner.reset();
  spareResponse = scanner;
}
