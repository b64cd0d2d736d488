/** Fork from a node: the pure decision of what a forked run reuses. */
export { ancestorsOf, descendantsOf, FORK_REFUSAL_CODES, planFork } from './fork-plan';
export type { ForkDecision, ForkRefusalCode, ForkRequest, ForkSourceNode, ReusedStatus } from './fork-plan';
