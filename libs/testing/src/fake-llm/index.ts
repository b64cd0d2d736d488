export { startFakeLlm } from './server';
export type { FakeLlmServer, FakeLlmOptions } from './server';
export type { FakeAnswer, FakeError, FakeHandler, FakeHang, FakeLlmRequest, FakeReply, FakeToken, FakeToolCall } from './types';
