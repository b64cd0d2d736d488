import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared';

/** The shared settings, plus the cross-service integration tests under `integration/` (services wired together in this process), the operator race tests under `operator/`, the short chaos suite under `chaos/`, the build and deployment checks under `ops/`, the documentation's tests under `docs/`, the lint configuration's tests under `lint/` and the bench's pure helpers under `bench/lib/`.
 *
 * Two files at a time: most of a file's time is spent waiting on the processes it starts (cluster
 * boots, workers, timers), so a second file fills the idle core. Each file owns its database and
 * Redis prefix; the whole workspace passed this way on a host loaded fourteen-fold.
 */
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: 2, include: ['integration/**/*.test.ts', 'operator/**/*.test.ts', 'chaos/**/*.test.ts', 'ops/**/*.test.ts', 'docs/**/*.test.ts', 'lint/**/*.test.ts', 'bench/lib/*.test.ts'] } }));
