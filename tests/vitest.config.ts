import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared';

/** The shared settings, plus the operator race tests under `operator/`, the short chaos suite under `chaos/`, the build and deployment checks under `ops/` and the documentation's tests under `docs/`. */
export default mergeConfig(shared, defineConfig({ test: { include: ['operator/**/*.test.ts', 'chaos/**/*.test.ts', 'ops/**/*.test.ts', 'docs/**/*.test.ts'] } }));
