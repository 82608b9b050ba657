/**
 * Keeps V8's WASM→JS import wrappers generic for the rest of the process (a budget no call count
 * reaches), so they are never tiered up.
 *
 * V8 13.6 (Node 24) can abort the process while tiering those wrappers up with several isolates
 * running: `V8_Fatal` in `ThreadIsolation::UnregisterWasmAllocation`, under
 * `Runtime_TierUpWasmToJSWrapper` → `WasmEngine::FreeDeadCode`, seen as an intermittent
 * SIGSEGV/SIGTRAP of worker-panel test processes. The router's own WASM (llhttp) makes no WASM→JS
 * call (src/peek/llhttp-counters.ts), but Node's TypeScript stripping does: amaro (SWC in WASM)
 * calls into JS for every .ts file it loads, in every thread, i.e. each worker thread at start and
 * at every restart. A wrapper takes the budget in force when its module is instantiated, so this
 * runs before any worker thread exists (panels/worker/thread.ts); `bin/switchboard.js` does the
 * same before its first .ts import, for the main thread's own modules.
 */
import { setFlagsFromString } from 'node:v8';

let done = false;

export function keepWasmWrappersGeneric(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--wasm-wrapper-tiering-budget=2147483647');
}
