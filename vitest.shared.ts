import { defineConfig } from 'vitest/config';

/** Shared vitest settings; each workspace re-exports this from its own vitest.config.ts. */
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'e2e/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
