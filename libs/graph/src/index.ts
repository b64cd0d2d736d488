export * from './model';
export type * from './planner/types';
export * from './conditions';
