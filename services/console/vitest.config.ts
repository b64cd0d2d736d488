import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

/**
 * Component tests (`src/**\/*.test.tsx`, happy-dom through each file's `@vitest-environment`) and the browser tests against a real
 * cluster in headless Chromium (`e2e/*.e2e.test.ts`, node; one cluster per file).
 */
export default defineConfig({
  plugins: [react()],
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'e2e/**/*.e2e.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // two files at a time: a browser test spends most of its time waiting on its cluster and
    // Chromium, and each file owns its cluster, database and browser
    maxWorkers: 2,
  },
});
