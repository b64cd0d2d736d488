/** "Why isn't this run moving?": one blocker per non-terminal node, as data. */
export { blockers } from './blockers';
export { BLOCKER_KINDS } from './types';
export type { Blocker, BlockerDetails, BlockerFacts, BlockerKind, JobFact } from './types';
