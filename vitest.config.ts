import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/**/*.test.ts',
      'address-books/**/*.test.ts',
      'operators/**/*.test.ts',
      'panels/**/*.test.ts',
      'src/**/*.test.ts',
      'app/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // V8 13.6 (Node 24) can abort a process whose worker threads tier up WASM→JS import wrappers
    // (src/peek/llhttp.ts keepGenericWasmWrappers): the budget is set at process start too, so
    // it holds before any isolate exists, not only from llhttp's first instantiation.
    execArgv: ['--wasm-wrapper-tiering-budget=2147483647'],
  },
});
