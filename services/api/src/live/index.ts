export { attachLive } from './live-server';
export { errorAck } from './handlers';
export type { LiveDeps, LiveServer } from './live-server';
export { liveConfigSchema, toLiveOptions, DEFAULT_LIVE_OPTIONS } from './config';
export type { LiveOptions } from './config';
export { createChangeFeed, sharedChangeFeed } from './change-feed';
export type { ChangeFeed } from './change-feed';
export { createPingMerger, mergePing } from './merger';
export { createTokenBucket } from './token-bucket';
