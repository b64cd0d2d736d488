import { describe, expect, it } from 'vitest';
import { JsonNumber } from '../conditions/exact-json';
import type { Graph, Json } from '../model';
import { drive, edge, graphOf, node, ok, snapshotOf, step, withResult } from '../planner/test-kit';
import type { PlanResult } from '../planner/types';
import { graphPublishes, publicationOfRow, publicationsOf, publishedText, publishesToChat } from './index';

const llmOutput = (text: unknown) => ({ text, json: null, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, durationMs: 1, finishReason: 'stop', model: 'm' } }) as never;

/** Chat graph Start → reply(LlmCall) → end(End, result at output.text); flags per node (absent when undefined). */
function chatGraph(opts: { reply?: boolean; end?: boolean | null; kind?: Graph['kind'] } = {}): Graph {
  const g = graphOf(
    [
      node('start', 'Start'),
      node('reply', 'LlmCall', { config: { prompt: 'answer', ...(opts.reply === undefined ? {} : { publishToChat: opts.reply }) } }),
      node('end', 'End', { config: { outcome: 'done', resultPath: 'input.output.text', ...(opts.end === undefined ? {} : { publishToChat: opts.end }) } }),
    ],
    [edge('e1', 'start', 'reply'), edge('e2', 'reply', 'end')],
  );
  return { ...g, kind: opts.kind ?? 'Chat', chat: { acceptsAttachments: false, requireRerunConfirmation: true } };
}

function allPublications(graph: Graph, text = 'hello there') {
  const run = drive(snapshotOf(graph, { text: 'hi' }), () => ({ ok: true, output: llmOutput(text), startedAt: 1, finishedAt: 1 }));
  expect(run.terminal).toBe(true);
  expect(run.snap.run.status).toBe('Completed');
  // each plan is judged against the run status its snapshot had
  let status = snapshotOf(graph).run.status;
  const out = [];
  for (const r of run.results) {
    out.push(...publicationsOf(graph, status, r));
    status = r.run?.set.status ?? status;
  }
  return out;
}

describe('publicationsOf', () => {
  it('publishes an LlmCall with publishToChat once, with its attempt and output.text', () => {
    expect(allPublications(chatGraph({ reply: true, end: false }))).toEqual([{ nodeKey: 'reply', attempt: 1, text: 'hello there' }]);
  });

  it('publishes an End with publishToChat with its result', () => {
    expect(allPublications(chatGraph({ end: true }))).toEqual([{ nodeKey: 'end', attempt: 1, text: 'hello there' }]);
  });

  it('publishes the End of a Chat graph once by default: without the flag or with it null', () => {
    expect(allPublications(chatGraph())).toEqual([{ nodeKey: 'end', attempt: 1, text: 'hello there' }]);
    expect(allPublications(chatGraph({ end: null }))).toEqual([{ nodeKey: 'end', attempt: 1, text: 'hello there' }]);
  });

  it('publishes both nodes when both carry the flag, in plan order', () => {
    expect(allPublications(chatGraph({ reply: true, end: true })).map((p) => p.nodeKey)).toEqual(['reply', 'end']);
  });

  it('publishes nothing when the End says publishToChat: false and no LlmCall says true', () => {
    expect(allPublications(chatGraph({ end: false }))).toEqual([]);
    expect(allPublications(chatGraph({ reply: false, end: false }))).toEqual([]);
  });

  it('publishes nothing in a Standard graph even if a flag slipped through', () => {
    expect(allPublications(chatGraph({ reply: true, end: true, kind: 'Standard' }))).toEqual([]);
  });

  it('publishes the attempt that succeeded after a retry', () => {
    const graph = chatGraph({ reply: true, end: false });
    let calls = 0;
    const run = drive(snapshotOf(graph), () => {
      calls++;
      return calls === 1
        ? { ok: false, failureClass: 'NodeFailed', reason: 'flaky', startedAt: 1, finishedAt: 1 }
        : { ok: true, output: llmOutput('second time'), startedAt: 1, finishedAt: 1 };
    });
    const pubs = run.results.flatMap((r) => publicationsOf(graph, 'Running', r));
    expect(pubs).toEqual([{ nodeKey: 'reply', attempt: 2, text: 'second time' }]);
  });

  it('publishes nothing from a plan that cancels the run, even for a node that succeeds in it', () => {
    const graph = chatGraph({ reply: true });
    let s = step(snapshotOf(graph), 1_000).snap; // start runs, reply queued
    s = withResult(s, 'reply', ok(llmOutput('late')));
    s = { ...s, intents: [{ id: 'c1', kind: 'cancel', reason: 'stop' }] };
    const r = step(s, 2_000).result;
    expect(r.run?.set.status === 'Cancelling' || r.run?.set.status === 'Cancelled').toBe(true);
    expect(publicationsOf(graph, s.run.status, r)).toEqual([]);
  });

  it('publishes nothing for a run already Cancelling', () => {
    const graph = chatGraph({ reply: true });
    const fake: PlanResult = {
      run: null,
      nodes: [{ nodeKey: 'reply', expect: { status: 'Running', attempt: 1 }, set: { status: 'Succeeded', output: { status: 'succeeded', attempt: 1, branch: null, output: llmOutput('x') } } }],
      events: [], enqueue: [], cancel: [], startChildren: [], cancelChildren: [], consumedIntentIds: [], consumedInvocationIds: [], wakeAt: null,
    };
    expect(publicationsOf(graph, 'Cancelling', fake)).toEqual([]);
    expect(publicationsOf(graph, 'Cancelled', fake)).toEqual([]);
    expect(publicationsOf(graph, 'Running', fake)).toEqual([{ nodeKey: 'reply', attempt: 1, text: 'x' }]);
  });

  it('marks a node whose output has no text to publish with text null', () => {
    expect(allPublications(chatGraph({ reply: true, end: false }), 42 as never)).toEqual([{ nodeKey: 'reply', attempt: 1, text: null }]);
  });
});

describe('publishedText', () => {
  it('reads output.text of LlmCall and Agent, the result of End (JSON unless a string)', () => {
    expect(publishedText('LlmCall', { text: 'a' })).toBe('a');
    expect(publishedText('Agent', { text: 'b', toolCalls: [] })).toBe('b');
    expect(publishedText('Agent', { text: null })).toBeNull();
    expect(publishedText('End', { outcome: 'done', result: 'c' })).toBe('c');
    expect(publishedText('End', { outcome: 'done', result: { a: 1 } })).toBe('{"a":1}');
    expect(publishedText('End', { outcome: 'done', result: null })).toBeNull();
    expect(publishedText('End', null)).toBeNull();
    expect(publishedText('LlmCall', ['x'])).toBeNull();
  });

  it('writes an End result with numbers a double cannot hold digit for digit', () => {
    const result = { id: new JsonNumber('9007199254740993') } as unknown as Json;
    expect(publishedText('End', { outcome: 'done', result })).toBe('{"id":9007199254740993}');
  });
});

describe('publishesToChat / graphPublishes', () => {
  it('is true for an LlmCall or Agent of a Chat graph with publishToChat: true and for its End unless false', () => {
    const g = chatGraph({ reply: true, end: false });
    expect(g.nodes.map((n) => publishesToChat(g, n))).toEqual([false, true, false]);
    expect(graphPublishes(g)).toBe(true);
    const byDefault = chatGraph();
    expect(byDefault.nodes.map((n) => publishesToChat(byDefault, n))).toEqual([false, false, true]);
    expect(graphPublishes(chatGraph({ end: false }))).toBe(false);
    const start = node('start', 'Start', { config: { publishToChat: true } });
    expect(publishesToChat(g, start)).toBe(false);
  });

  it('is false for every node of a Standard graph, the End without a flag included', () => {
    const g = chatGraph({ kind: 'Standard' });
    expect(g.nodes.map((n) => publishesToChat(g, n))).toEqual([false, false, false]);
    expect(graphPublishes(g)).toBe(false);
  });
});

describe('publicationOfRow', () => {
  it('reads the attempt and text of a succeeded envelope, nothing from a failed or missing one', () => {
    const env = { status: 'succeeded' as const, attempt: 2, branch: null, output: { text: 'hi' } };
    expect(publicationOfRow('LlmCall', 'reply', 2, env)).toEqual({ nodeKey: 'reply', attempt: 2, text: 'hi' });
    expect(publicationOfRow('End', 'end', 1, { ...env, output: { outcome: 'x', result: null } })).toEqual({ nodeKey: 'end', attempt: 1, text: null });
    expect(publicationOfRow('LlmCall', 'reply', 2, { ...env, status: 'failed' })).toBeNull();
    expect(publicationOfRow('LlmCall', 'reply', 2, null)).toBeNull();
  });
});
