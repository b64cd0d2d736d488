import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JsonNumber, type Json, type WorkItem } from '@flowline/graph';
import { isExactWakeMessage, isExactWorkItem, isExactWorkReturn, parseWakeMessage, parseWorkItem, toWire, wakeMessageSchema, workItemSchema, workReturnSchema } from './index';

const envelope = { status: 'succeeded', attempt: 1, branch: null, output: { input: { q: 'x' } } };
const item: WorkItem = {
  lane: 'tool',
  runId: 'run-1',
  nodeKey: 'fetch',
  kind: 'Tool',
  invocationId: '7f8c0a52-3a8e-4d8e-9a1e-0c2c6c7e1f00',
  attempt: 1,
  config: { toolName: 'echo', arguments: { a: 1 } },
  input: { run: { input: { q: 'x' } }, upstream: { start: envelope }, input: envelope } as WorkItem['input'],
  deadlineAt: 1_700_000_000_000,
  steering: [],
  outputSchema: null,
};
const ret = {
  runId: 'run-1',
  nodeKey: 'fetch',
  invocationId: item.invocationId,
  outcome: { ok: true, output: { result: { a: 1 } }, startedAt: 1, finishedAt: 2 },
};

/** Replacements that break (or keep) one member: each is tried on every path of a valid value. */
const oddValues: unknown[] = [
  undefined,
  null,
  '',
  'x'.repeat(201),
  0,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  [],
  ['a', 1],
  {},
  { extra: 1 },
  new JsonNumber('12345678901234567890'),
  new Date(0),
  new Map(),
  'tool',
  'llm',
  'Tool',
  'succeeded',
  'NodeFailed',
  { ...envelope, extra: 1 },
  envelope,
  { a: envelope },
];

/** Every path to a member of `v`. */
function paths(v: unknown, prefix: string[] = []): string[][] {
  if (v === null || typeof v !== 'object' || v instanceof JsonNumber) return [prefix];
  const out: string[][] = [prefix];
  for (const k of Object.keys(v)) out.push(...paths((v as Record<string, unknown>)[k], [...prefix, k]));
  return out;
}

function withAt(v: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = Array.isArray(v) ? [...(v as unknown[])] : { ...(v as Record<string, unknown>) };
  (copy as Record<string, unknown>)[path[0]!] = withAt((v as Record<string, unknown>)[path[0]!], path.slice(1), value);
  return copy;
}

/** Accepted by hand ⇒ zod accepts it and returns it unchanged; every mutation of the valid values is tried. */
function agree(base: unknown, check: (v: unknown) => boolean, schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }): void {
  const all = paths(base);
  fc.assert(
    fc.property(fc.constantFrom(...all), fc.constantFrom(...oddValues), fc.boolean(), (path, odd, addMember) => {
      let v = withAt(base, path, odd);
      if (addMember && v !== null && typeof v === 'object') v = { ...(v as object), extraMember: 1 };
      if (!check(v)) return;
      const z = schema.safeParse(v);
      expect(z.success).toBe(true);
      expect(z.data).toEqual(v);
    }),
    { numRuns: 2000 },
  );
}

describe('hand-written shape checks (the hot path of issue #19)', () => {
  it('accept the values the planner and the worker write', () => {
    expect(isExactWorkItem(item)).toBe(true);
    expect(isExactWorkItem({ ...item, chat: true })).toBe(true);
    expect(isExactWorkReturn(ret)).toBe(true);
    expect(isExactWakeMessage({ runId: 'run-1', ret })).toBe(true);
    expect(isExactWakeMessage({ runId: 'run-1' })).toBe(true);
    expect(isExactWakeMessage({ runId: 'run-1', tenantId: 'acme' })).toBe(true);
    expect(isExactWakeMessage({ failed: { invocationId: 'i', reason: 'r', at: 1 } })).toBe(true);
  });

  it('refuse what zod would refuse or change (extra members, bad ids, a wake naming nothing)', () => {
    expect(isExactWorkItem({ ...item, extra: 1 })).toBe(false);
    expect(isExactWorkItem({ ...item, chat: false })).toBe(false);
    expect(isExactWorkItem({ ...item, runId: '' })).toBe(false);
    expect(isExactWorkItem({ ...item, attempt: 0 })).toBe(false);
    expect(isExactWorkItem({ ...item, input: { ...item.input, input: { ...envelope, extra: 1 } } })).toBe(false);
    expect(isExactWakeMessage({})).toBe(false);
    expect(isExactWakeMessage({ runId: 'r', tenantId: '' })).toBe(false);
    expect(isExactWakeMessage({ runId: 'r', tenantId: 7 })).toBe(false);
    expect(isExactWakeMessage({ runId: 'r', ret: { ...ret, outcome: { ...ret.outcome, ok: false } } })).toBe(false);
  });

  it('never accept what the zod work item schema refuses or normalises', () => {
    agree(item, isExactWorkItem, workItemSchema);
    agree({ ...item, chat: true }, isExactWorkItem, workItemSchema);
  });

  it('never accept what the zod work return schema refuses or normalises', () => {
    agree(ret, isExactWorkReturn, workReturnSchema);
    agree({ ...ret, outcome: { ok: false, failureClass: 'NodeFailed', reason: 'x', startedAt: null, finishedAt: 2 } }, isExactWorkReturn, workReturnSchema);
  });

  it('never accept a wake message the zod schema refuses or normalises', () => {
    agree({ runId: 'run-1', ret }, isExactWakeMessage, wakeMessageSchema);
    agree({ runId: 'run-1', started: { invocationId: 'i', nodeKey: 'n', at: 1 } }, isExactWakeMessage, wakeMessageSchema);
    agree({ failed: { invocationId: 'i', reason: 'r', at: 1 } }, isExactWakeMessage, wakeMessageSchema);
    agree({ runId: 'run-1', tenantId: 'acme' }, isExactWakeMessage, wakeMessageSchema);
  });

  it('parseWorkItem and parseWakeMessage read the wire forms as the zod schemas do', () => {
    const exact: WorkItem = { ...item, config: { toolName: 'echo', arguments: { big: new JsonNumber('12345678901234567890') } as unknown as Json } };
    const fast = parseWorkItem(JSON.parse(JSON.stringify(toWire(exact))));
    expect(fast.success).toBe(true);
    expect(fast.data).toEqual(workItemSchema.parse(exact));
    const extra = parseWorkItem({ ...item, extra: 1 });
    expect(extra.success && extra.data).toEqual(item);
    const raw = JSON.stringify({ runId: 'run-1', ret: toWire({ ...ret, outcome: { ...ret.outcome, output: { n: new JsonNumber('12345678901234567890') } } }) });
    expect(parseWakeMessage(raw)).toEqual(wakeMessageSchema.parse(JSON.parse(raw)));
    expect(parseWakeMessage('{"runId":""}')).toBeNull();
    expect(parseWakeMessage('not json')).toBeNull();
  });
});
