export { layoutGraph, LAYOUT_DEFAULTS } from './layout';
export type { GraphLayout, LayoutGraph, LayoutOptions, NodePlacement } from './layout';
