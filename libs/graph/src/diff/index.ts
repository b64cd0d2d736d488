/** The difference between two versions of a definition (`GET /v1/definitions/{id}/diff`). */
export { diffGraphs } from './graph-diff';
export type { GraphDiff, MemberChange, SchemaChange } from './graph-diff';
