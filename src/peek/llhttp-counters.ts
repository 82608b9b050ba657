/**
 * What llhttp's cross-check callbacks record, done inside WebAssembly (issue 18): three small
 * functions put in llhttp's function table in place of the JS callbacks, so a head costs no
 * WASM→JS call at all (each one goes through V8's generic wrapper, llhttp.ts). They write
 * into four int32 at `base` in llhttp's own memory, which llhttp.ts reads after the execute:
 *
 *   [base + 0]  offset of the URL's first span (-1: none yet, -2: spans not contiguous)
 *   [base + 4]  end of the URL's last span
 *   [base + 8]  field lines seen (one `on_header_field` span each)
 *   [base + 12] 1 once the head is complete (`on_headers_complete`)
 *
 * The module is 200 bytes, assembled by hand (no toolchain in the project); its text form:
 *
 *   (import "env" "memory" (memory 0)) (import "env" "base" (global $b i32))
 *   (func (export "url") (param $p i32) (param $at i32) (param $n i32) (result i32)
 *     (if (i32.eq (i32.load (global.get $b)) (i32.const -1))
 *       (then (i32.store (global.get $b) (local.get $at)))
 *       (else (if (i32.ne (local.get $at) (i32.load offset=4 (global.get $b)))
 *         (then (i32.store (global.get $b) (i32.const -2))))))
 *     (i32.store offset=4 (global.get $b) (i32.add (local.get $at) (local.get $n)))
 *     (i32.const 0))
 *   (func (export "field") (param i32 i32 i32) (result i32)
 *     (i32.store offset=8 (global.get $b) (i32.add (i32.load offset=8 (global.get $b)) (i32.const 1)))
 *     (i32.const 0))
 *   (func (export "complete") (param i32) (result i32)
 *     (i32.store offset=12 (global.get $b) (i32.const 1)) (i32.const 0))
 */

const BYTES =
  'AGFzbQEAAAABDQJgA39/fwF/YAF/AX8CGwIDZW52Bm1lbW9yeQIAAANlbnYEYmFzZQN/AAMEAwAAAQcaAwN1cmwAAAVmaWVsZAABCGNvbXBsZXRlAAIKUwMzACMAKAIAQX9GBEAjACABNgIABSABIwAoAgRHBEAjAEF+NgIACwsjACABIAJqNgIEQQALEQAjACMAKAIIQQFqNgIIQQALCwAjAEEBNgIMQQAL';

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (mod: object, imports: object) => { readonly exports: unknown };
}
const { Module, Instance } = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

/** The three callbacks, as WebAssembly functions (for a function table). */
export interface Counters {
  readonly url: unknown;
  readonly field: unknown;
  readonly complete: unknown;
}

/** Instantiates the counters over `memory` (llhttp's), writing at `base`. */
export function counters(memory: unknown, base: number): Counters {
  const instance = new Instance(new Module(Buffer.from(BYTES, 'base64')), { env: { memory, base } });
  return instance.exports as Counters;
}
