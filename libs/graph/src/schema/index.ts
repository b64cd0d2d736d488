export { checkSchema, validateJson, SCHEMA_CACHE_LIMIT } from './ajv';
export type { JsonValidation } from './ajv';
export { canonicalJson, hasExactNumbers } from './canonical-json';
