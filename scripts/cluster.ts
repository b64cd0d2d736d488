/**
 * The child-process cluster of `npm start`, which lives in @flowline/testing (`startCluster`,
 * `waitForApi`, `seedSamples`); re-exported here for tests/bench/lib, which imports it from this path.
 */
export { buildServices, startCluster, waitForApi, seedSamples } from '@flowline/testing';
export type { Cluster, ClusterOptions, ManagedProcess, ProcessSpec, ServiceName } from '@flowline/testing';
