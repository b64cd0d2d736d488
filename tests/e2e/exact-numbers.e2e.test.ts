/**
 * CONTRACT §1.2 through the whole cluster: integers a double cannot hold travel from the
 * request body through the store, the dispatcher, the planner, the tool lane (BullMQ job
 * data and return value) and back to REST reads digit for digit. Bodies are sent and read
 * as raw text (a JS client's JSON.parse would round them itself) and read back with the
 * lossless parser.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonExact } from '@flowline/graph';
import { waitFor, startE2eCluster, type E2eCluster } from '@flowline/testing';

/** 2^53 + 1: the smallest positive integer a double cannot hold. */
const BIG = '9007199254740993';
const TWO_53 = '9007199254740992';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents are read member by member
type Doc = any;

/** The text of a number read with the lossless parser (a JsonNumber keeps its token). */
const digits = (v: unknown): string => String(v);

/** Start → Condition on `big` (Gt / Lte 2^53) → echo Tool of `big` → End; Lte → its own End. */
function branchOnBig(): string {
  return `{
    "nodes": [
      { "key": "start", "kind": "Start" },
      { "key": "cond", "kind": "Condition", "config": { "path": "output.input.big" } },
      { "key": "echo", "kind": "Tool", "config": { "toolName": "echo", "argumentBindings": { "big": "run.input.big" } } },
      { "key": "endGt", "kind": "End", "config": { "outcome": "gt", "resultPath": "input.output.result" } },
      { "key": "endLte", "kind": "End", "config": { "outcome": "lte" } }
    ],
    "edges": [
      { "key": "e1", "from": "start", "to": "cond" },
      { "key": "gt", "from": "cond", "to": "echo", "condition": { "op": "Gt", "value": ${TWO_53} } },
      { "key": "lte", "from": "cond", "to": "endLte", "condition": { "op": "Lte", "value": ${TWO_53} } },
      { "key": "e2", "from": "echo", "to": "endGt" }
    ]
  }`;
}

/**
 * Start → Pause → echo Tool of its input's `big` → `wait` Tool → End of the wait's output:
 * the decide payload, an operator's input override and a `complete` payload each carry a
 * big number.
 */
function operatorPath(): string {
  return `{
    "nodes": [
      { "key": "start", "kind": "Start" },
      { "key": "gate", "kind": "Pause", "config": { "prompt": "go?", "allowedDecisions": ["Approve"] } },
      { "key": "work", "kind": "Tool", "config": { "toolName": "echo", "argumentBindings": { "big": "input.big" } } },
      { "key": "hold", "kind": "Tool", "config": { "toolName": "wait", "arguments": { "ms": 60000 } } },
      { "key": "end", "kind": "End", "config": { "outcome": "done", "resultPath": "input.output" } }
    ],
    "edges": [
      { "key": "e1", "from": "start", "to": "gate" },
      { "key": "e2", "from": "gate", "to": "work", "condition": { "path": "output.decision", "op": "Eq", "value": "Approve" } },
      { "key": "e3", "from": "work", "to": "hold" },
      { "key": "e4", "from": "hold", "to": "end" }
    ]
  }`;
}

describe('exact numbers through the cluster (CONTRACT §1.2)', () => {
  let c: E2eCluster;

  /** A request with a raw JSON text body; the answer parsed losslessly. */
  async function send(method: string, path: string, body?: string): Promise<{ status: number; body: Doc }> {
    const res = await fetch(`${c.cluster.apiUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : parseJsonExact(text) };
  }

  async function ok(method: string, path: string, body?: string): Promise<Doc> {
    const r = await send(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async function define(graph: string): Promise<string> {
    return (await ok('POST', '/v1/definitions', `{"name":"exact-${randomUUID()}","graph":${graph}}`)).id as string;
  }

  function waitRun(runId: string, pred: (v: Doc) => boolean, description: string): Promise<Doc> {
    return waitFor(
      async () => {
        const v = await ok('GET', `/v1/runs/${runId}`);
        return pred(v) ? v : false;
      },
      { timeoutMs: 30_000, intervalMs: 150, description },
    );
  }

  const node = (v: Doc, key: string): Doc => (v.nodeRuns as Doc[]).find((n) => n.nodeKey === key);

  beforeAll(async () => {
    c = await startE2eCluster();
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('routes 2^53+1 through the Gt 2^53 edge and reads it back digit for digit in the output and the node documents', async () => {
    const definitionId = await define(branchOnBig());
    const { runId } = await ok('POST', `/v1/definitions/${definitionId}/runs`, `{"input":{"big":${BIG}}}`);
    const v = await waitRun(runId, (r) => ['Completed', 'Failed', 'Cancelled'].includes(r.run.status), 'run finished');

    expect(v.run.status).toBe('Completed');
    expect(node(v, 'endLte').status).toBe('Skipped');
    expect(v.output.outcome).toBe('gt');
    expect(digits(v.output.result.big)).toBe(BIG);

    const cond = await ok('GET', `/v1/runs/${runId}/nodes/cond`);
    expect(digits(cond.input.run.input.big)).toBe(BIG);
    expect(digits(cond.output.output.input.big)).toBe(BIG);
    expect(cond.output.branch).toBe('gt');
    // the tool lane: job data (argument binding) and return value (echoed result)
    const echo = await ok('GET', `/v1/runs/${runId}/nodes/echo`);
    expect(digits(echo.input.run.input.big)).toBe(BIG);
    expect(digits(echo.output.output.result.big)).toBe(BIG);
  }, 60_000);

  it('keeps a decide payload, an input override and a complete payload exact', async () => {
    const definitionId = await define(operatorPath());
    const { runId } = await ok('POST', `/v1/definitions/${definitionId}/runs`, '{"input":{}}');
    await waitRun(runId, (r) => node(r, 'gate')?.status === 'WaitingForApproval', 'gate waits');
    await ok('PUT', `/v1/runs/${runId}/breakpoints`, '{"nodeKeys":["work"]}');
    await ok('POST', `/v1/runs/${runId}/nodes/gate/decide`, `{"operationId":"${randomUUID()}","decision":"Approve","payload":{"big":${BIG}}}`);
    await waitRun(runId, (r) => node(r, 'gate').status === 'Succeeded' && node(r, 'work').status === 'Pending', 'work held');

    const override = '9007199254740995';
    await ok('PUT', `/v1/runs/${runId}/nodes/work/input`, `{"input":{"big":${override}}}`);
    await ok('PUT', `/v1/runs/${runId}/breakpoints`, '{"nodeKeys":[]}');
    await waitRun(runId, (r) => node(r, 'hold').status === 'Running', 'hold running');

    const completed = '-9007199254740997';
    await ok('POST', `/v1/runs/${runId}/nodes/hold/complete`, `{"output":{"big":${completed},"tiny":0.1000000000000000055511151231257827}}`);
    const v = await waitRun(runId, (r) => ['Completed', 'Failed', 'Cancelled'].includes(r.run.status), 'run finished');

    expect(v.run.status).toBe('Completed');
    expect(digits(v.output.result.big)).toBe(completed);
    expect(digits(v.output.result.tiny)).toBe('0.1000000000000000055511151231257827');
    const gate = await ok('GET', `/v1/runs/${runId}/nodes/gate`);
    expect(digits(gate.output.output.payload.big)).toBe(BIG);
    const work = await ok('GET', `/v1/runs/${runId}/nodes/work`);
    expect(digits(work.input.input.big)).toBe(override);
    expect(digits(work.output.output.result.big)).toBe(override);
    const hold = await ok('GET', `/v1/runs/${runId}/nodes/hold`);
    expect(digits(hold.output.output.big)).toBe(completed);
  }, 60_000);
});
