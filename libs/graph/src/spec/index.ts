export type { MemberSpec, MemberType, NodeKindGroup } from './member';
export { NODE_KIND_GROUPS, memberNamed } from './member';
export {
  CHAT_MEMBER_SPECS,
  CONDITION_MEMBER_SPECS,
  EDGE_MEMBER_SPECS,
  GRAPH_MEMBER_SPECS,
  NODE_MEMBER_SPECS,
  RETRY_BACKOFF_MEMBER_SPECS,
} from './document';
export type { NodeKindSpec } from './node-kinds';
export { NODE_KIND_SPECS, REASONING_EFFORTS, SAMPLING_MEMBER_SPECS } from './node-kinds';
