/**
 * llhttp's callbacks, done inside WebAssembly (issue 18): every function llhttp's module imports
 * is one of this module's, so llhttp never calls into JS. A WASM→JS call goes through one of V8's
 * wrappers, ~0.15 µs each, and V8 13.6 can abort while tiering those up (src/process/wasm-wrappers.ts); a
 * WASM→WASM import needs no wrapper. The callbacks the cross-check reads write four int32 at the
 * start of this module's own one-page memory, which llhttp.ts reads after each execute:
 *
 *   [0]   offset of the URL's first span in llhttp's memory (-1: none yet, -2: not contiguous)
 *   [4]   end of the URL's last span
 *   [8]   field lines seen (one `on_header_field` span each)
 *   [12]  1 once the head is complete (`on_headers_complete`)
 *
 * The others (message begin and end, status, field values, body) return 0: continue.
 *
 * The module is 191 bytes, assembled by hand from this text form (no toolchain in the project;
 * `wat2wasm` from Debian's wabt makes the same bytes):
 *
 *   (module
 *     (memory (export "memory") 1)
 *     (func (export "url") (param $p i32) (param $at i32) (param $n i32) (result i32)
 *       (if (i32.eq (i32.load (i32.const 0)) (i32.const -1))
 *         (then (i32.store (i32.const 0) (local.get $at)))
 *         (else (if (i32.ne (local.get $at) (i32.load offset=4 (i32.const 0)))
 *           (then (i32.store (i32.const 0) (i32.const -2))))))
 *       (i32.store offset=4 (i32.const 0) (i32.add (local.get $at) (local.get $n)))
 *       (i32.const 0))
 *     (func (export "field") (param i32 i32 i32) (result i32)
 *       (i32.store offset=8 (i32.const 0) (i32.add (i32.load offset=8 (i32.const 0)) (i32.const 1)))
 *       (i32.const 0))
 *     (func (export "complete") (param i32 i32 i32 i32) (result i32)
 *       (i32.store offset=12 (i32.const 0) (i32.const 1)) (i32.const 0))
 *     (func (export "span") (param i32 i32 i32) (result i32) (i32.const 0))
 *     (func (export "event") (param i32) (result i32) (i32.const 0)))
 */

const BYTES =
  'AGFzbQEAAAABFQNgA39/fwF/YAR/f39/AX9gAX8BfwMGBQAAAQACBQMBAAEHMgYGbWVtb3J5AgADdXJsAAAFZmllbGQAAQhjb21wbGV0ZQACBHNwYW4AAwVldmVudAAECl0FMwBBACgCAEF/RgRAQQAgATYCAAUgAUEAKAIERwRAQQBBfjYCAAsLQQAgASACajYCBEEACxEAQQBBACgCCEEBajYCCEEACwsAQQBBATYCDEEACwQAQQALBABBAAs=';

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (mod: object, imports: object) => { readonly exports: unknown };
}
const { Module, Instance } = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** The callbacks, as WebAssembly functions, and the memory they write to. */
export interface Counters {
  readonly memory: { readonly buffer: ArrayBuffer };
  /** (parser, at, length): notes the URL's span. */
  readonly url: unknown;
  /** (parser, at, length): counts a field line. */
  readonly field: unknown;
  /** (parser and three words llhttp-wasm passes): notes the end of the head. */
  readonly complete: unknown;
  /** (parser, at, length): a span nothing reads. */
  readonly span: unknown;
  /** (parser): an event nothing reads. */
  readonly event: unknown;
}

/** Instantiates the counters (one per llhttp instance, i.e. per thread). */
export function counters(): Counters {
  const instance = new Instance(new Module(Buffer.from(BYTES, 'base64')), {});
  return instance.exports as Counters;
}
