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
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';

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
  readonly __indirect_function_table: {
    readonly length: number;
    get(i: number): { readonly name: string } | null;
  };
  llhttp_free(p: number): void;
  _initialize(): void;
  malloc(n: number): number;
  free(p: number): void;
  llhttp_alloc(type: number): number;
  llhttp_reset(p: number): void;
  llhttp_execute(p: number, data: number, len: number): number;
  llhttp_get_http_major(p: number): number;
  llhttp_get_http_minor(p: number): number;
  llhttp_get_status_code(p: number): number;
  llhttp_get_error_reason(p: number): number;
}

/** What the callbacks of the one execute in progress saw (one head at a time, synchronously). */
let urlAt = -1;
let urlEnd = -1;
let fields = 0;
let complete = false;

/** The WASM bytes embedded (base64) in llhttp-wasm's own loader. */
function wasmBytes(): Uint8Array {
  const require = createRequire(import.meta.url);
  const source = readFileSync(require.resolve('llhttp-wasm'), 'latin1');
  const m = /binaryString\s*=\s*"([A-Za-z0-9+/=]+)"/.exec(source);
  if (m === null) throw new Error('llhttp-wasm: embedded WASM module not found');
  return Buffer.from(m[1]!, 'base64');
}

let wasm: Exports | undefined;

/**
 * V8 13.6 (Node 24) can abort the process (`V8_Fatal` in `ThreadIsolation::UnregisterWasmAllocation`,
 * from `Runtime_TierUpWasmToJSWrapper` freeing dead import wrappers) when WASM→JS calls tier up
 * their wrappers while several isolates, i.e. the worker panel's threads, run this module: seen as
 * an intermittent SIGSEGV/SIGTRAP of worker-panel test processes, a core dump's stack is the one
 * above. The callbacks above stay on V8's generic wrapper instead (no tier-up: the budget is never
 * spent). The flag is process-wide and read when a module is instantiated, so it is set first.
 */
function keepGenericWasmWrappers(): void {
  setFlagsFromString('--wasm-wrapper-tiering-budget=2147483647');
}

function instantiate(): Exports {
  keepGenericWasmWrappers();
  const mod = new Module(wasmBytes());
  const instance = new Instance(mod, {
    env: {
      wasm_on_message_begin: () => 0,
      wasm_on_url: (_p: number, at: number, length: number) => {
        if (urlAt === -1) urlAt = at;
        else if (at !== urlEnd) urlAt = -2; // not contiguous: cannot be one target
        urlEnd = at + length;
        return 0;
      },
      wasm_on_status: () => 0,
      wasm_on_header_field: () => {
        fields++;
        return 0;
      },
      wasm_on_header_value: () => 0,
      wasm_on_headers_complete: () => {
        complete = true;
        return 0;
      },
      wasm_on_body: () => 0,
      wasm_on_message_complete: () => 0,
    },
  });
  const e = instance.exports as unknown as Exports;
  e._initialize();
  dropUnusedCallbacks(mod, e);
  return e;
}

/** How many settings slots `dropUnusedCallbacks` cleared (tests read it: 5 with this build). */
let dropped = 0;
export function llhttpDroppedCallbacks(): number {
  wasm ??= instantiate();
  return dropped;
}

/** The callbacks llhttp need not call: only the URL, field names and the end of the head are read. */
const UNUSED = new Set([
  'wasm_on_message_begin',
  'wasm_on_status',
  'wasm_on_header_value',
  'wasm_on_body',
  'wasm_on_message_complete',
]);

/**
 * Clears the settings slots of the callbacks nobody reads, so llhttp skips those calls (its
 * `CALLBACK_MAYBE` treats an empty slot as "continue"): one WASM→JS call per field line and three
 * per head fewer. The build's settings struct is static and shared by every parser; it is found
 * through a parser's `settings` pointer and each slot is identified, not assumed: a slot holds a
 * function-table index, the table's entry is named by its function index (the WebAssembly JS API
 * names exported functions so), and imported functions take the first indices in import order.
 * A slot that is not one of ours is left alone; if no settings struct is found, nothing changes.
 */
function dropUnusedCallbacks(mod: object, e: Exports): void {
  const imports = (Module as unknown as { imports(m: object): { name: string; kind: string }[] })
    .imports(mod)
    .filter((i) => i.kind === 'function')
    .map((i) => i.name);
  const table = e.__indirect_function_table;
  const nameAt = (slot: number): string | undefined => {
    if (slot <= 0 || slot >= table.length) return undefined;
    const f = table.get(slot);
    return f === null ? undefined : imports[Number(f.name)];
  };
  const probe = e.llhttp_alloc(TYPE.REQUEST);
  const words = new Uint32Array(e.memory.buffer);
  for (let w = probe >>> 2, end = w + 32; w < end; w++) {
    const at = words[w]!;
    if (at === 0 || at % 4 !== 0 || at + 64 > words.byteLength) continue;
    const slots = words.subarray(at >>> 2, (at >>> 2) + 16);
    if (!slots.some((s) => nameAt(s) === 'wasm_on_url')) continue;
    if (!slots.some((s) => nameAt(s) === 'wasm_on_header_field')) continue;
    for (let i = 0; i < slots.length; i++) {
      if (!UNUSED.has(nameAt(slots[i]!) ?? '')) continue;
      slots[i] = 0;
      dropped++;
    }
    break;
  }
  e.llhttp_free(probe);
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
 * [start, end) of `buf` (the whole of it by default), copied without a view of their own.
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
  // After malloc: memory.buffer may have grown (a new ArrayBuffer, the old view detached).
  const buffer = e.memory.buffer;
  if (memory === undefined || memory.buffer !== buffer) memory = new Uint8Array(buffer);
  // TypedArray#set, not Buffer#copy: node's native copy into a view of WASM memory is the
  // suspect of an intermittent SIGSEGV under load (seen twice in CI runs); set() stays in V8.
  memory.set(start === 0 && end === buf.length ? buf : buf.subarray(start, end), input);
  e.llhttp_reset(p);
  urlAt = -1;
  urlEnd = -1;
  fields = 0;
  complete = false;
  const rc = e.llhttp_execute(p, input, length);
  if ((rc !== OK && rc !== PAUSED_UPGRADE) || !complete) {
    return { ok: false, reason: (rc === OK ? 'incomplete head' : reasonOf(e, p)).toLowerCase() };
  }
  const major = e.llhttp_get_http_major(p);
  return {
    ok: true,
    urlAt: urlAt < 0 ? urlAt : urlAt - input,
    urlLength: urlAt < 0 ? 0 : urlEnd - urlAt,
    versionMinor: major === 1 ? e.llhttp_get_http_minor(p) : -1,
    fields,
    status: kind === 'RESPONSE' ? e.llhttp_get_status_code(p) : 0,
  };
}
