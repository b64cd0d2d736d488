export * from './names';
export * from './schemas';
export * from './wire';
export * from './lane-queue';
export * from './live';
export * from './lane-worker';
export * from './dispatch-window';
export * from './lane-backlog';
