/** Version aliases of a definition (`current`, named and weighted) and how a start picks its version. */
export { ALIAS_NAME_PATTERN, aliasTargetsOf, childVersion, CURRENT_ALIAS, MAX_ALIAS_TARGETS, pickTarget, resolveAlias } from './alias';
export type { AliasBody, AliasTarget, ChildNodePin, ChildVersion } from './alias';
