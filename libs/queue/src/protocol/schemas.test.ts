import { describe, expect, it } from 'vitest';
import { JsonNumber, type WorkItem } from '@flowline/graph';
import {
  admittedAt,
  fromWire,
  parseWorkItem,
  toWire,
  cancelChannel,
  channelPrefix,
  redisDbOf,
  cancelMessageSchema,
  jobIdFor,
  parseMessage,
  queueNameFor,
  startsOnAdmission,
  wakeChannel,
  wakeMessageSchema,
  workItemSchema,
  workReturnSchema,
} from './index';

const item: WorkItem = {
  lane: 'tool',
  runId: 'run-1',
  nodeKey: 'fetch',
  kind: 'Tool',
  invocationId: '7f8c0a52-3a8e-4d8e-9a1e-0c2c6c7e1f00',
  attempt: 1,
  config: { toolName: 'echo', arguments: { a: 1 } },
  input: {
    run: { input: { q: 'x' } },
    upstream: { start: { status: 'succeeded', attempt: 1, branch: null, output: { input: { q: 'x' } } } },
    input: { status: 'succeeded', attempt: 1, branch: null, output: { input: { q: 'x' } } },
  },
  deadlineAt: 1_700_000_000_000,
  steering: [],
  outputSchema: null,
};

describe('work item schema', () => {
  it('accepts a planner work item unchanged', () => {
    expect(workItemSchema.parse(item)).toEqual(item);
  });

  it("carries an Agent's resume point: its generation and the decision on its tool call", () => {
    const agent = { ...item, lane: 'llm' as const, kind: 'Agent' as const, agent: { generation: 2, decision: { operationId: 'op', decision: 'Approve' as const, comment: null, payload: { arguments: { a: 1 } } } } };
    expect(parseWorkItem(toWire(agent))).toEqual({ success: true, data: agent });
  });

  it('accepts an input document whose input is a map of several predecessors', () => {
    const env = { status: 'succeeded', attempt: 1, branch: null, output: {} } as const;
    const several = { ...item, input: { ...item.input, input: { a: env, b: env } } };
    expect(workItemSchema.safeParse(several).success).toBe(true);
  });

  it('refuses an unknown lane, a zero attempt and a non-JSON config value', () => {
    expect(workItemSchema.safeParse({ ...item, lane: 'gpu' }).success).toBe(false);
    expect(workItemSchema.safeParse({ ...item, attempt: 0 }).success).toBe(false);
    expect(workItemSchema.safeParse({ ...item, config: { f: () => 1 } }).success).toBe(false);
  });

  it('refuses a payload without an invocation id', () => {
    const { invocationId: _drop, ...rest } = item;
    expect(workItemSchema.safeParse(rest).success).toBe(false);
  });

  it('accepts exact numbers (JsonNumber) anywhere in its documents and keeps them as they are', () => {
    const big = new JsonNumber('9007199254740993');
    const exact = { ...item, config: { toolName: 'echo', arguments: { a: [big] } }, input: { ...item.input, run: { input: { big } } } } as never;
    const parsed = workItemSchema.safeParse(exact);
    expect(parsed.success).toBe(true);
    expect((parsed.data!.input.run.input as { big: unknown }).big).toBe(big);
  });
});

describe('queue wire form', () => {
  it('hands BullMQ a work item without exact numbers as it is', () => {
    expect(toWire(item)).toBe(item);
    expect(fromWire(item)).toBe(item);
  });

  it('carries a work item with exact numbers as its ids and exact text, and reads it back equal', () => {
    const exact = { ...item, input: { ...item.input, run: { input: { big: new JsonNumber('-9007199254740993') } } } } as unknown as WorkItem;
    const wire = toWire(exact);
    expect(wire).toEqual({
      runId: item.runId,
      nodeKey: item.nodeKey,
      invocationId: item.invocationId,
      exactJson: expect.stringContaining('"big":-9007199254740993'),
    });
    expect(parseWorkItem(JSON.parse(JSON.stringify(wire))).data).toEqual(exact);
  });

  it('reads an exact text that is not JSON as an invalid work item', () => {
    const ids = { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId };
    expect(parseWorkItem({ ...ids, exactJson: '{"lane":' }).success).toBe(false);
  });
});

describe('work return schema', () => {
  it('accepts a success and a failure outcome keyed by invocation', () => {
    const ids = { runId: 'r', nodeKey: 'n', invocationId: 'i-1' };
    expect(workReturnSchema.safeParse({ ...ids, outcome: { ok: true, output: { result: 1 }, startedAt: 1, finishedAt: 2 } }).success).toBe(true);
    expect(
      workReturnSchema.safeParse({
        ...ids,
        outcome: { ok: false, failureClass: 'Timeout', reason: 'deadline', startedAt: null, finishedAt: 2 },
      }).success,
    ).toBe(true);
  });

  it("accepts an Agent's park on a tool call and an output charged apart from its usage", () => {
    const ids = { runId: 'r', nodeKey: 'n', invocationId: 'i-1' };
    const park = { ok: 'park', request: { kind: 'ToolCall', tool: 'mcp:pay/refund', arguments: { amount: 1 }, step: 4 }, startedAt: 1, finishedAt: 2, usage: { totalTokens: 3 } };
    expect(workReturnSchema.parse({ ...ids, outcome: park })).toEqual({ ...ids, outcome: park });
    expect(workReturnSchema.safeParse({ ...ids, outcome: { ...park, request: { ...park.request, kind: 'Other' } } }).success).toBe(false);
    const charged = { ok: true, output: { text: 'x' }, startedAt: 1, finishedAt: 2, usage: { totalTokens: 3 } };
    expect(workReturnSchema.parse({ ...ids, outcome: charged })).toEqual({ ...ids, outcome: charged });
  });

  it('refuses a failure with an unknown failure class or without a reason', () => {
    const ids = { runId: 'r', nodeKey: 'n', invocationId: 'i-1' };
    expect(workReturnSchema.safeParse({ ...ids, outcome: { ok: false, failureClass: 'Oops', reason: 'x', startedAt: null, finishedAt: 2 } }).success).toBe(false);
    expect(workReturnSchema.safeParse({ ...ids, outcome: { ok: false, failureClass: 'NodeFailed', startedAt: null, finishedAt: 2 } }).success).toBe(false);
  });
});

describe('names', () => {
  it('names lane queues node.llm and node.tool', () => {
    expect(queueNameFor('llm')).toBe('node.llm');
    expect(queueNameFor('tool')).toBe('node.tool');
  });

  it('uses the invocation id as the job id and refuses ids BullMQ cannot store', () => {
    expect(jobIdFor('abc-1')).toBe('abc-1');
    expect(() => jobIdFor('42')).toThrow(/integer/);
    expect(() => jobIdFor('a:b')).toThrow(/":"/);
    expect(() => jobIdFor('')).toThrow();
  });

  it('derives the cancel and wake channels from the prefix', () => {
    expect(cancelChannel('{t1}')).toBe('{t1}:cancel');
    expect(wakeChannel()).toBe('{flowline}:wake');
  });

  it('puts a connection’s database index (when not 0) in the channels’ prefix: pub/sub ignores the database', () => {
    expect(channelPrefix('{flowline}', { options: { db: 2 } })).toBe('{flowline}:db2');
    expect(wakeChannel(channelPrefix('{flowline}', { options: { db: 2 } }))).toBe('{flowline}:db2:wake');
    expect(channelPrefix('{flowline}', { options: { db: 0 } })).toBe('{flowline}');
    // a cluster client (no db option) and anything else: database 0
    expect(channelPrefix('{flowline}', { options: { redisOptions: {} } })).toBe('{flowline}');
    expect(channelPrefix('{t1}', null)).toBe('{t1}');
    expect(redisDbOf({ options: { db: 15 } })).toBe(15);
  });
});

describe('pub/sub messages', () => {
  it('parses a cancel message and defaults its reason to null', () => {
    expect(parseMessage(cancelMessageSchema, '{"invocationId":"i-1"}')).toEqual({ invocationId: 'i-1', reason: null });
  });

  it('answers null for garbage instead of throwing', () => {
    expect(parseMessage(wakeMessageSchema, 'not json')).toBeNull();
    expect(parseMessage(wakeMessageSchema, '{"run":"x"}')).toBeNull();
  });
});

describe('admission progress', () => {
  it('starts the llm lane on admission and the tool lane on pickup', () => {
    expect(startsOnAdmission('llm')).toBe(true);
    expect(startsOnAdmission('tool')).toBe(false);
  });

  it('reads the admission time only from an admitted progress value', () => {
    expect(admittedAt({ phase: 'admitted', provider: 'default/m', at: 42 })).toBe(42);
    expect(admittedAt({ phase: 'waiting-for-capacity', provider: 'default/m' })).toBeNull();
    expect(admittedAt({ phase: 'admitted', provider: 'default/m' })).toBeNull();
    expect(admittedAt(0)).toBeNull();
    expect(admittedAt(null)).toBeNull();
  });
});
