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
    // V8's WASM→JS wrappers stay generic from the start of each test process (src/process/wasm-wrappers.ts:
    // V8 13.6 can abort while tiering them up in several threads; the worker panel sets the same
    // before its first thread, this covers what the process loads before that).
    execArgv: ['--wasm-wrapper-tiering-budget=2147483647'],
  },
});
