export { describe, edgeKind } from './describe';
export type { EdgeDescriptor, EdgeKind, GraphAnalysis, GraphDescriptor, NodeDescriptor } from './describe';
export { toMermaid, toDot, mermaidEscape, dotEscape, edgeText, conditionText } from './render';
export { pauseContextEdges, starvedSuccessors } from './pause-context';
export type { ContextEdge, ContextGraph, Starved } from './pause-context';
