export { RunStateFold, foldState, reducerOf } from './fold';
export type { StateWrite, WriteVerdict } from './fold';
export { STATE_MEMBERS, checkConflictWriters, keepsState, parseStateBlock, parseWrites } from './parse-state';
