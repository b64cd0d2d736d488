/** The e2e graph documents live in @flowline/testing; re-exported here for tests/bench/lib, which imports them from this path. */
export { canonicalWithTool, waitThenEcho } from '@flowline/testing';
