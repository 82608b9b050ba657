#!/usr/bin/env node
// The switchboard command. Node ≥ 22.18 runs the TypeScript sources directly (type stripping); an
// older Node is refused here, in plain JavaScript, before any .ts file is loaded.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `switchboard: needs Node >= 22.18 (Node 24 LTS recommended), this is ${process.version}; ` +
      'run `source scripts/use-node.sh` in the repository (it puts Node 24 on PATH) or install Node 24\n',
  );
  process.exit(1);
}
// Installed from npm (under node_modules, where Node strips no types): bin/installed.js loads the .ts files.
if (import.meta.url.includes('/node_modules/')) await import('./installed.js');
// Before the first .ts import: V8's WASM→JS wrappers stay generic (src/process/wasm-wrappers.ts says why).
const { setFlagsFromString } = await import('node:v8');
setFlagsFromString('--wasm-wrapper-tiering-budget=2147483647');
// `start` re-executes itself once, at once, under `--no-memory-reducer` (same pid): V8's memory
// reducer throws the optimised connection path away after every lull (src/process/memory-reducer.ts).
const { restartWithoutMemoryReducer } = await import('../src/process/memory-reducer.ts');
restartWithoutMemoryReducer();
// Before the router's modules load: they would grow V8's young generation past the cap that
// `switchboard start` keeps (src/process/young-generation.ts); start caps it, other commands release it.
const { holdYoungGeneration } = await import('../src/process/young-generation.ts');
holdYoungGeneration();
const { main } = await import('../cli/index.ts');
await main(process.argv);
