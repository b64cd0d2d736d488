export * from './tool-error';
export type * from './tool-definition';
export * from './dot-path';
export * from './registry';
export { MAX_WAIT_MS, sleep } from './builtins/basic-tools';
export { createHttpFetchTool, type HttpFetchOptions } from './builtins/http-fetch';
export { createReadFileTool, DEFAULT_MAX_FILE_BYTES } from './builtins/read-file';
export { isPrivateAddress, isUrlAllowed, normalizeAllowedUrls, parseIPv6 } from './builtins/address-policy';
