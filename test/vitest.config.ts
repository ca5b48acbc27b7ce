import { defineConfig } from 'vitest/config';

// Unit tests are pure and fast; integration tests start real node and engine processes from the built CLI
// (`npm test` builds first), so they run at most two files at a time on our 2-core machines.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
