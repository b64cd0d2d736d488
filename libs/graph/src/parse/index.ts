export { parseGraph, validateGraph } from './parse-graph';
export type { GraphValidation, ParseOptions, ParseResult, ToolCatalog } from './types';
export { normaliseOp } from './condition';
export { dotPathError, KEY_PATTERN } from './util';
export { CONFIG_SPECS, REASONING_EFFORTS } from './config';
export { DEFAULT_RETRY_BACKOFF, RETRYING_KINDS, urlUnderPrefix } from './node';
