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
  },
});
