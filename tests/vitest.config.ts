import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared';

/** The shared settings, plus the cross-service integration tests under `integration/` (services wired together in this process), the operator race tests under `operator/`, the short chaos suite under `chaos/`, the build and deployment checks under `ops/`, the documentation's tests under `docs/`, the lint configuration's tests under `lint/` and the bench's pure helpers under `bench/lib/`. */
export default mergeConfig(shared, defineConfig({ test: { include: ['integration/**/*.test.ts', 'operator/**/*.test.ts', 'chaos/**/*.test.ts', 'ops/**/*.test.ts', 'docs/**/*.test.ts', 'lint/**/*.test.ts', 'bench/lib/*.test.ts'] } }));
