import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared';

/**
 * The pure core's tests are CPU-bound and share nothing (no database, no Redis, no clock
 * deadlines), so they use every core: vitest's default keeps one core free, which on a 2-core
 * CI machine runs these files one at a time.
 */
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: '100%' } }));
