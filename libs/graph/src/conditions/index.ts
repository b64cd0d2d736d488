/**
 * Edge conditions and lossless JSON (CONTRACT §1.2).
 */
export { evaluateCondition, evaluateConditionOn, compareValues } from './evaluate';
export { resolvePath, splitPath, isValidPath, isPlainObject } from './path';
export type { PathResolution } from './path';
export { compareExactNumbers, compareOrdinal, isExactNumber } from './compare';
export type { ExactNumber } from './compare';
export {
  JsonNumber,
  JsonSyntaxError,
  mayHoldInexactNumber,
  parseJson,
  parseJsonExact,
  stringifyJson,
  stringifyJsonExact,
  DEFAULT_MAX_JSON_DEPTH,
} from './exact-json';
export type { ParseJsonExactOptions } from './exact-json';
