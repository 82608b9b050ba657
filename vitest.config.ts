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
    // V8 13.6 (Node 24) can abort a process whose threads tier up WASM→JS import wrappers. The
    // router's own WASM makes no such call (src/peek/llhttp-counters.ts); the test processes also
    // run undici's llhttp (fetch), whose callbacks are JS, so its wrappers are kept from tiering up.
    execArgv: ['--wasm-wrapper-tiering-budget=2147483647'],
  },
});
