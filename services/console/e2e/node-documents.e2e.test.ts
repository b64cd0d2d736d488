/**
 * The node panel answers "what happened", in real headless Chromium against a whole cluster
 * (API, dispatcher, tool and LLM workers) with a fake OpenAI-compatible provider: an LlmCall
 * shows its configured prompt and its answer as text with the model and usage; a Pause its
 * decision and the person's comment; an Agent its steps (model turns, the tool call with its
 * arguments and its result, read from the transcript) and its answer; a Tool its output opened at its first meaningful level.
 *
 * And the numbers: a node with one attempt retried by an operator reads its attempt past its
 * limit (never "attempt 2 of 1"); completed by an operator, its duration counts from the
 * completion, not from the attempt that failed; a running node's duration and a waiting
 * run's duration in the runs list tick between events. axe-core: no serious or critical
 * violation. Screenshots: artifacts/node-doc-*.png.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlmRequest, type FakeLlmServer } from '@flowline/testing';
import { consoleSession, oneToolGraph, screenshot, seriousViolations } from './console-cluster';

let llm: FakeLlmServer;

const toolMessages = (req: FakeLlmRequest) => (req.body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;

const storyGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'fetch', kind: 'Tool', config: { toolName: 'echo', arguments: { result: { rows: [{ id: 1, name: 'Ada' }, { id: 2, name: 'Grace' }], total: 2 } } } },
    { key: 'summary', kind: 'LlmCall', label: 'Summarise', config: { systemPrompt: 'You are terse.', prompt: 'Summarise the rows: {{ input.output }}' } },
    { key: 'review', kind: 'Pause', config: { prompt: 'Send it?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'agent', kind: 'Agent', config: { instructions: 'Echo the greeting, then say you are done.', tools: ['echo'] } },
    { key: 'end', kind: 'End', config: { outcome: 'sent' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'fetch' },
    { key: 'e2', from: 'fetch', to: 'summary' },
    { key: 'e3', from: 'summary', to: 'review' },
    { key: 'e4', from: 'review', to: 'agent' },
    { key: 'e5', from: 'agent', to: 'end' },
  ],
};

const flakyGraph = oneToolGraph('flaky', { toolName: 'test_fail', arguments: { untilAttempt: 3 } }, 1);

const slowGraph = oneToolGraph('slow', { toolName: 'test_fail', arguments: { untilAttempt: 1, ms: 20_000 } });

describe('node documents and the numbers of the run view', () => {
  const s = consoleSession({
    cluster: async () => {
      llm = await startFakeLlm({
        handler: (req) => {
          if (Array.isArray(req.body.tools) && req.body.tools.length > 0) {
            return toolMessages(req) === 0 ? { toolCalls: [{ id: 't1', name: 'echo', arguments: { greeting: { text: 'hello', marker: 'echoed-back-7' } } }] } : { content: 'Echoed the greeting; done.' };
          }
          return { content: 'Two people: Ada and Grace.\nNothing else stands out.' };
        },
      });
      return { llmWorkers: 1, env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model', LLM_STREAM: '0' } };
    },
  });
  afterAll(async () => {
    await llm?.close();
  });

  it('reads a run node by node: the output at its first level, the prompt and answer, the decision and its comment, the Agent’s steps', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'story', graph: storyGraph });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');

    // a Tool's output opens where its content is: { result: { rows, total } } opens at result
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=fetch`);
    const fetch = page.locator('[data-node-panel="fetch"]');
    await fetch.getByText('Output › result').waitFor();
    expect(await fetch.locator('.json-doc').first().innerText()).toContain('rows');

    // the LlmCall: its prompt as configured and its answer as text, with the model
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=summary`);
    const summary = page.locator('[data-node-panel="summary"]');
    const prompt = summary.getByRole('region', { name: 'Prompt' });
    await prompt.waitFor();
    expect(await prompt.innerText()).toContain('You are terse.');
    expect(await prompt.innerText()).toContain('Summarise the rows: {{ input.output }}');
    const answer = summary.getByRole('region', { name: 'Answer' });
    expect(await answer.locator('.answer-text').innerText()).toBe('Two people: Ada and Grace.\nNothing else stands out.');
    expect(await answer.locator('.answer-usage').innerText()).toContain('fake-model');
    expect(await seriousViolations(page)).toEqual([]);
    await answer.scrollIntoViewIfNeeded();
    await screenshot(page, 'node-doc-llm');

    // the decision and its comment, decided in the console
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=review`);
    const review = page.locator('[data-node-panel="review"]');
    await review.getByLabel(/Comment/).fill('Reads well, send it.');
    await review.getByRole('button', { name: 'Approve' }).click();
    const decision = review.getByRole('region', { name: 'Decision' });
    await decision.waitFor({ timeout: 15_000 });
    expect(await decision.locator('[data-decision]').innerText()).toBe('Approve');
    expect(await decision.locator('.decision-comment').innerText()).toBe('Reads well, send it.');
    await decision.scrollIntoViewIfNeeded();
    await screenshot(page, 'node-doc-decision');

    // the Agent: its steps with the tool call's arguments, and its answer
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=agent`);
    const agent = page.locator('[data-node-panel="agent"]');
    const steps = agent.getByRole('list', { name: 'Agent steps' });
    await steps.waitFor();
    expect(await steps.locator('li').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-step-kind')))).toEqual(['model', 'tool', 'model']);
    const tool = steps.locator('li[data-step-kind="tool"]');
    expect(await tool.innerText()).toContain('echo');
    // its result, read from the transcript: echo answers its arguments, opened at their first level
    const result = tool.getByRole('group', { name: 'Result of echo' });
    await result.waitFor({ timeout: 15_000 });
    expect(await result.innerText()).toContain('Result › greeting');
    expect(await result.innerText()).toContain('echoed-back-7');
    await tool.getByText('Arguments', { exact: true }).click();
    expect(await tool.innerText()).toContain('hello');
    expect(await agent.getByRole('region', { name: 'Prompt' }).innerText()).toContain('Echo the greeting');
    expect(await agent.getByRole('region', { name: 'Answer' }).locator('.answer-text').innerText()).toBe('Echoed the greeting; done.');
    expect(await seriousViolations(page)).toEqual([]);
    await steps.scrollIntoViewIfNeeded();
    await screenshot(page, 'node-doc-agent');
  }, 120_000);

  it('reads an operator’s retry past the limit as such, and times an operator’s completion from the completion', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'flaky', graph: flakyGraph });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('Failed');
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=flaky`);
    const panel = page.locator('[data-node-panel="flaky"]');
    const fact = (name: string) => panel.locator('dl.facts > div', { has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
    await expect.poll(() => fact('Attempt').innerText()).toBe('1 of 1');
    await panel.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).nodeRuns.find((n) => n.nodeKey === 'flaky')?.attempt, { timeout: 30_000 }).toBe(2);
    await page.locator('.run-title [data-status="Failed"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => fact('Attempt').innerText()).toBe('2 (its limit 1, retried by an operator)');
    // time passes between the failure and the operator's completion: it is not the node's run time
    await new Promise((r) => setTimeout(r, 2_500));
    await panel.getByRole('button', { name: 'Complete…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Complete node' }).click();
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => fact('Status').innerText()).toBe('Succeeded');
    expect(await fact('Duration').innerText()).toMatch(/^\d{1,3} ms$/);
    await screenshot(page, 'node-doc-operator');
  }, 90_000);

  it('ticks a running node’s duration in its panel and a live run’s duration in the runs list, with no event between', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'slow', graph: slowGraph });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).nodeRuns.find((n) => n.nodeKey === 'slow')?.status, { timeout: 30_000 }).toBe('Running');
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=slow`);
    const duration = page.locator('[data-node-panel="slow"] dl.facts > div', { has: page.locator('dt', { hasText: /^Duration$/ }) }).locator('dd');
    await duration.waitFor();
    const before = await duration.innerText();
    await expect.poll(() => duration.innerText(), { timeout: 5_000 }).not.toBe(before);

    await page.goto(`${s.c.baseUrl}/console/runs`);
    const row = page.locator(`tr[data-run-id="${runId}"] td.num`).last();
    await row.waitFor();
    // it moves each second, not only when the list is re-read every 3 s: two moves in a row, the second within 2.5 s
    const listed = await row.innerText();
    await expect.poll(() => row.innerText(), { timeout: 5_000, interval: 50 }).not.toBe(listed);
    const moved = await row.innerText();
    await expect.poll(() => row.innerText(), { timeout: 2_500, interval: 50 }).not.toBe(moved);
  }, 60_000);
});
