export * from './definitions';
export * from './runs';
export * from './node-runs';
export * from './events';
export * from './intents';
export * from './node-results';
export * from './shard-leases';
export * from './conversations';
