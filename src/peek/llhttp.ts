/**
 * Our small interface over llhttp-wasm, used as the basic-grammar gate for complete heads.
 *
 * 1. One parser per kind per module (per thread), created on first use; `reset()` before each
 *    head. `execute()` is synchronous and copies the bytes into WASM memory.
 * 2. We call `execute()` exactly once with a complete head (found by HeadScanner), because
 *    llhttp-wasm stores header and URL pieces per call, so split heads would come back garbled.
 * 3. llhttp is lenient in places (two Host lines, TE on HTTP/1.0…) and has no strict switch;
 *    the strict checks live in our own code. What llhttp refuses, we refuse too: this includes
 *    methods it does not know (it has a fixed method table).
 * 4. The caller cross-checks what llhttp saw against its own parse; a disagreement is a 400.
 * 5. llhttp-wasm builds every URL, field and value string with `new TextDecoder()`; creating a
 *    decoder per string was half the cost of a head. During our synchronous `execute()` the
 *    global constructor is swapped for one that returns a shared decoder (same output), and
 *    restored before returning.
 */

import { createParser, type HeadersComplete, type Parser } from 'llhttp-wasm';

/** What llhttp saw in one head, or the reason it refused it. */
export type LlhttpResult =
  | {
      readonly ok: true;
      readonly url: string;
      readonly versionMinor: number;
      readonly fields: number;
      readonly status: number;
    }
  | { readonly ok: false; readonly reason: string };

type Kind = 'REQUEST' | 'RESPONSE';

const parsers = new Map<Kind, Parser>();

const sharedDecoder = new TextDecoder();
/** A stand-in constructor: `new SharedDecoder()` yields the one shared (stateless, utf-8) decoder. */
const SharedDecoder = function SharedDecoder() {
  return sharedDecoder;
} as unknown as typeof TextDecoder;
let seen: HeadersComplete | undefined;

// The error numbers llhttp returns when it pauses after a CONNECT/Upgrade head; not errors here.
const PAUSED_UPGRADE = 22;
const OK = 0;

function parserFor(kind: Kind): Parser {
  let p = parsers.get(kind);
  if (p === undefined) {
    // llhttp-wasm looks the type up by name; passing TYPE.REQUEST (a number) gives type BOTH.
    p = createParser(kind as never);
    p.onHeadersComplete = (msg) => {
      seen = msg;
      return 0;
    };
    parsers.set(kind, p);
  }
  return p;
}

/** Runs llhttp once over a complete head (start line through the final CRLFCRLF). */
export function llhttpHead(kind: Kind, head: Uint8Array): LlhttpResult {
  const p = parserFor(kind);
  p.reset();
  seen = undefined;
  const original = globalThis.TextDecoder;
  globalThis.TextDecoder = SharedDecoder;
  let rc: number;
  try {
    rc = p.execute(head);
  } finally {
    globalThis.TextDecoder = original;
  }
  const msg = seen as HeadersComplete | undefined;
  seen = undefined;
  if ((rc !== OK && rc !== PAUSED_UPGRADE) || msg === undefined) {
    return { ok: false, reason: (p.getErrorReason(rc) ?? 'incomplete head').toLowerCase() };
  }
  return {
    ok: true,
    url: msg.url ?? '',
    versionMinor: msg.versionMajor === 1 ? msg.versionMinor : -1,
    fields: msg.rawHeaders.length / 2,
    status: msg.statusCode ?? 0,
  };
}
