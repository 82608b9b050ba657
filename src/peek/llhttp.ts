/**
 * Our small interface over llhttp (the WASM build shipped by llhttp-wasm), used as the
 * basic-grammar gate for complete request heads.
 *
 * 1. One parser per kind per module (per thread), created on first use; reset before each head.
 *    `llhttpHead()` is synchronous and copies the head into one buffer in WASM memory that is
 *    allocated once (and grown when a longer head comes).
 * 2. We call `llhttp_execute` exactly once with a complete head (found by HeadScanner).
 * 3. llhttp is lenient in places (two Host lines, TE on HTTP/1.0…) and has no strict switch;
 *    the strict checks live in our own code. What llhttp refuses, we refuse too: this includes
 *    methods it does not know (it has a fixed method table).
 * 4. The caller cross-checks what llhttp saw against its own parse; a disagreement is a 400.
 * 5. The same WASM module as llhttp-wasm's, instantiated here with our own callbacks (issue 18):
 *    llhttp-wasm's binding decodes every URL, field name and value into a string (a TextDecoder
 *    call each), keeps them in arrays, builds a message object and mallocs/frees the input per
 *    call; the cross-check needs none of that. Our callbacks only record where the URL is and
 *    count field lines; nothing is allocated per head except on a refusal (the reason text).
 * 6. Every callback is a WebAssembly function (llhttp-counters.ts), bound as llhttp's imports, so
 *    llhttp never calls into JS: not per head, not in the start-up probe. Cheaper, and no
 *    wrapper of ours for V8 13.6 to tier up (src/process/wasm-wrappers.ts).
 * 7. Only the three callbacks the cross-check reads are called at all (`slimSettings`): the
 *    others are left out of the parser's settings, checked on a sample head at instantiation;
 *    llhttp-wasm's own settings stay if that check fails.
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { InternalError } from '../base/errors.ts';
import { type Counters, counters as wasmCounters } from './llhttp-counters.ts';

/** What llhttp saw in one head, or the reason it refused it. */
export type LlhttpResult =
  | {
      readonly ok: true;
      /** Offset of the request-target in the head (requests; -1 when llhttp saw none). */
      readonly urlAt: number;
      readonly urlLength: number;
      readonly versionMinor: number;
      readonly fields: number;
      readonly status: number;
    }
  | { readonly ok: false; readonly reason: string };

type Kind = 'REQUEST' | 'RESPONSE';

/** llhttp's parser types (llhttp-wasm constants TYPE). */
const TYPE: Record<Kind, number> = { REQUEST: 1, RESPONSE: 2 };
// The error numbers llhttp returns when it pauses after a CONNECT/Upgrade head; not errors here.
const PAUSED_UPGRADE = 22;
const OK = 0;

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (mod: object, imports: object) => { readonly exports: unknown };
}
const { Module, Instance } = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

interface Exports {
  readonly memory: { readonly buffer: ArrayBuffer };
  readonly __indirect_function_table?: { get(i: number): unknown; set(i: number, f: unknown): void };
  _initialize(): void;
  malloc(n: number): number;
  free(p: number): void;
  llhttp_alloc(type: number): number;
  llhttp_init(p: number, type: number, settings: number): void;
  llhttp_settings_init(settings: number): void;
  llhttp_reset(p: number): void;
  llhttp_free(p: number): void;
  llhttp_execute(p: number, data: number, len: number): number;
  llhttp_get_http_major(p: number): number;
  llhttp_get_http_minor(p: number): number;
  llhttp_get_status_code(p: number): number;
  llhttp_get_error_reason(p: number): number;
}

/** What llhttp's callbacks saw in the one execute in progress (one head at a time, synchronously). */
let urlAt = -1;
let urlEnd = -1;
let fields = 0;
let complete = false;

/** The WASM bytes embedded (base64) in llhttp-wasm's own loader. */
function wasmBytes(): Uint8Array {
  const require = createRequire(import.meta.url);
  const source = readFileSync(require.resolve('llhttp-wasm'), 'latin1');
  const m = /binaryString\s*=\s*"([A-Za-z0-9+/=]+)"/.exec(source);
  if (m === null) throw new InternalError('llhttp-wasm: embedded WASM module not found');
  return Buffer.from(m[1]!, 'base64');
}

let wasm: Exports | undefined;
/** llhttp's callbacks and the four int32 they write (llhttp-counters.ts); made with `wasm`. */
let callbacks: Counters | undefined;
let seen: Int32Array | undefined;

function instantiate(): Exports {
  const c = wasmCounters();
  const mod = new Module(wasmBytes());
  const instance = new Instance(mod, { env: envOf(c) });
  const e = instance.exports as unknown as Exports;
  e._initialize();
  callbacks = c;
  // The counters' memory is one page that never grows: this view stays attached.
  seen = new Int32Array(c.memory.buffer, 0, 4);
  return e;
}

/** llhttp-wasm's imports, each bound to a WebAssembly function. */
function envOf(c: Counters): Record<string, unknown> {
  return {
    wasm_on_message_begin: c.event,
    wasm_on_url: c.url,
    wasm_on_status: c.span,
    wasm_on_header_field: c.field,
    wasm_on_header_value: c.span,
    wasm_on_headers_complete: c.complete,
    wasm_on_body: c.span,
    wasm_on_message_complete: c.event,
  };
}

/**
 * llhttp's settings with only the callbacks the cross-check reads (issue 18): the URL, each
 * field name and the end of the head. llhttp-wasm's own settings also name message begin/end,
 * status, body and every field value; each is a call into the counters module for nothing, and
 * llhttp calls none of them when its settings slot is empty (llhttp's documented NULL callback), so the grammar it checks is the same. Which slot names
 * which import is found by probing, not assumed from a struct layout: each non-empty slot of
 * the settings llhttp_alloc installed is tried alone on a sample head and kept only when it
 * reaches one of the three callbacks. Undefined (llhttp-wasm's own settings stay) when the
 * probe cannot find them, or the slim settings do not see the sample head as the full ones do.
 */
function slimSettings(e: Exports): number | undefined {
  const size = settingsSize(e);
  const p = e.llhttp_alloc(TYPE.REQUEST);
  const orig = settingsOf(e, p);
  if (size === undefined || orig === undefined || size % 4 !== 0) return undefined;
  const slim = e.malloc(size);
  const words = new DataView(e.memory.buffer);
  const full = probe(e, p, orig);
  const keep: number[] = [];
  for (let at = 0; at < size; at += 4) {
    const fn = words.getUint32(orig + at, true);
    if (fn === 0) continue;
    e.llhttp_settings_init(slim);
    new DataView(e.memory.buffer).setUint32(slim + at, fn, true);
    if (probe(e, p, slim) === EMPTY_PROBE) continue;
    keep.push(at, fn);
  }
  e.llhttp_settings_init(slim);
  const view = new DataView(e.memory.buffer);
  for (let i = 0; i < keep.length; i += 2) view.setUint32(slim + keep[i]!, keep[i + 1]!, true);
  const same = probe(e, p, slim) === full && full !== EMPTY_PROBE;
  e.llhttp_free(p);
  if (same) return slim;
  e.free(slim);
  return undefined;
}

/** Clears what the callbacks saw, before an execute. */
function resetSeen(): void {
  const v = seen!;
  v[0] = -1;
  v[1] = -1;
  v[2] = 0;
  v[3] = 0;
}

/** After an execute: what the callbacks saw, into plain variables. */
function readSeen(): void {
  const v = seen!;
  urlAt = v[0]!;
  urlEnd = v[1]!;
  fields = v[2]!;
  complete = v[3] === 1;
}

const PROBE = Buffer.from('POST /probe HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx');
const EMPTY_PROBE = '-1 -1 0 false';

/** What the three kept callbacks saw of the sample head with these settings. */
function probe(e: Exports, p: number, settings: number): string {
  e.llhttp_init(p, TYPE.REQUEST, settings);
  const at = e.malloc(PROBE.length);
  new Uint8Array(e.memory.buffer).set(PROBE, at);
  resetSeen();
  e.llhttp_execute(p, at, PROBE.length);
  readSeen();
  e.free(at);
  return `${urlAt < 0 ? urlAt : urlAt - at} ${urlEnd < 0 ? urlEnd : urlEnd - at} ${fields} ${complete}`;
}

/** The size of llhttp_settings_t: the bytes llhttp_settings_init clears. */
function settingsSize(e: Exports): number | undefined {
  const max = 512;
  const at = e.malloc(max);
  const u8 = new Uint8Array(e.memory.buffer);
  u8.fill(0xab, at, at + max);
  e.llhttp_settings_init(at);
  let n = 0;
  while (n < max && u8[at + n] === 0) n++;
  e.free(at);
  return n > 0 && n < max ? n : undefined;
}

/** The settings pointer llhttp_init stored in parser `p`, found by storing a known one. */
function settingsOf(e: Exports, p: number): number | undefined {
  const words = 64;
  const before = new DataView(e.memory.buffer.slice(p, p + 4 * words));
  const mark = e.malloc(512);
  e.llhttp_settings_init(mark);
  e.llhttp_init(p, TYPE.REQUEST, mark);
  const after = new DataView(e.memory.buffer);
  let found: number | undefined;
  for (let i = 0; i < words; i++) {
    if (after.getUint32(p + 4 * i, true) === mark && before.getUint32(4 * i, true) !== mark) {
      found = before.getUint32(4 * i, true);
      break;
    }
  }
  if (found !== undefined) e.llhttp_init(p, TYPE.REQUEST, found);
  e.free(mark);
  return found;
}

/** The settings every parser gets: slimSettings', or 0 for llhttp-wasm's own. */
let settings = -1;

/**
 * How many of llhttp's imports are JS functions (issue 18: none, counted by a test). A
 * WebAssembly exported function's `name` is its index in its module (the JS API), a JS one's is not.
 */
export function llhttpCallbacks(): number {
  wasm ??= instantiate();
  return Object.values(envOf(callbacks!)).filter((f) => !/^\d+$/.test((f as { name: string }).name)).length;
}

const parsers = new Map<Kind, number>();
/** The input buffer in WASM memory, reused by every call. */
let input = 0;
let inputSize = 0;
/** A view of WASM memory, made again only when the memory grew (its old ArrayBuffer detaches). */
let memory: Uint8Array | undefined;

function parserFor(e: Exports, kind: Kind): number {
  let p = parsers.get(kind);
  if (p === undefined) {
    p = e.llhttp_alloc(TYPE[kind]);
    if (settings === -1) settings = slimSettings(e) ?? 0;
    if (settings !== 0) e.llhttp_init(p, TYPE[kind], settings);
    parsers.set(kind, p);
  }
  return p;
}

function reasonOf(e: Exports, p: number): string {
  const u8 = new Uint8Array(e.memory.buffer);
  const at = e.llhttp_get_error_reason(p);
  if (at === 0) return 'incomplete head';
  const end = u8.indexOf(0, at);
  return Buffer.from(u8.buffer, at, end - at).toString('latin1');
}

/**
 * Runs llhttp once over a complete head (start line through the final CRLFCRLF): bytes
 * [start, end) of `buf` (the whole of it by default), copied without a view of their own. An
 * accepted head's result is one shared object, valid until the next call.
 */
export function llhttpHead(kind: Kind, buf: Uint8Array, start = 0, end = buf.length): LlhttpResult {
  wasm ??= instantiate();
  const e = wasm;
  const p = parserFor(e, kind);
  const length = end - start;
  if (length > inputSize) {
    if (input !== 0) e.free(input);
    inputSize = Math.max(length, 8192);
    input = e.malloc(inputSize);
  }
  // After malloc: memory.buffer may have grown (a new ArrayBuffer, the old view detached: length 0).
  if (memory === undefined || memory.length === 0) memory = new Uint8Array(e.memory.buffer);
  // TypedArray#set, not Buffer#copy: node's native copy into a view of WASM memory is the
  // suspect of an intermittent SIGSEGV under load (seen twice in CI runs); set() stays in V8.
  memory.set(start === 0 && end === buf.length ? buf : buf.subarray(start, end), input);
  e.llhttp_reset(p);
  resetSeen();
  const rc = e.llhttp_execute(p, input, length);
  readSeen();
  if ((rc !== OK && rc !== PAUSED_UPGRADE) || !complete) {
    return { ok: false, reason: (rc === OK ? 'incomplete head' : reasonOf(e, p)).toLowerCase() };
  }
  const major = e.llhttp_get_http_major(p);
  const r = accepted;
  r.urlAt = urlAt < 0 ? urlAt : urlAt - input;
  r.urlLength = urlAt < 0 ? 0 : urlEnd - urlAt;
  r.versionMinor = major === 1 ? e.llhttp_get_http_minor(p) : -1;
  r.fields = fields;
  r.status = kind === 'RESPONSE' ? e.llhttp_get_status_code(p) : 0;
  return r;
}

/** The one result of an accepted head, filled by every call (nothing allocated per head). */
const accepted: { ok: true; urlAt: number; urlLength: number; versionMinor: number; fields: number; status: number } = {
  ok: true,
  urlAt: -1,
  urlLength: 0,
  versionMinor: -1,
  fields: 0,
  status: 0,
};
