export { definitionReferences, parseGraph, validateGraph } from './parse-graph';
export type { GraphValidation, ParseOptions, ParseResult, ToolCatalog } from './types';
export { normaliseOp } from './condition';
export { dotPathError, KEY_PATTERN } from './util';
export { checkOf, parseJoinPolicy } from './member-check';
export type { Check } from './member-check';
export { DEFAULT_RETRY_BACKOFF, RETRYING_KINDS, urlUnderPrefix } from './node';
export { fewestAttemptsOfGraph, unreachableBudgetMessage } from './budget-reach';
