export * from './model';
export type * from './planner/types';
export * from './conditions';
export * from './planner';
export * from './documents';
export * from './state-machine';
export * from './parse';
export * from './schema';
export * from './inspect';
