export * from './definitions';
export * from './definition-versions';
export * from './runs';
export * from './node-runs';
export * from './events';
export * from './intents';
export * from './shard-leases';
export * from './conversations';
