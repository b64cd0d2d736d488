/**
 * The tutorial's "five searches in parallel, one summary" graph, taken from docs/tutorial.md as
 * a reader copies it, run through a whole cluster with a fake OpenAI-compatible provider: the
 * run completes with the five findings in state, and the prompt the provider received holds
 * every one of them (the `{{ state.findings }}` template rendered by the LLM worker).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startE2eCluster, startFakeLlm, type E2eCluster, type FakeLlmServer } from '@flowline/testing';

/** The graph the tutorial's "Five searches" section saves as searches.json. */
function tutorialGraph(): Record<string, unknown> {
  const text = readFileSync(join(REPO_ROOT, 'docs/tutorial.md'), 'utf8');
  const section = text.slice(text.indexOf('## 7. Five searches in parallel, one summary'));
  const block = /cat > searches\.json <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(section);
  if (!block) throw new Error('no searches.json in the tutorial section');
  return JSON.parse(block[1]!) as Record<string, unknown>;
}

type Message = { role: string; content: unknown };

describe("the tutorial's five searches, one summary", () => {
  let c: E2eCluster;
  let llm: FakeLlmServer;

  beforeAll(async () => {
    llm = await startFakeLlm({ handler: () => ({ content: 'Tides rise twice a day.' }) });
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1, env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model', LLM_STREAM: '0' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await llm?.close();
  });

  it('collects five findings in state and hands all of them to the summary prompt', async () => {
    const definitionId = await c.api.createDefinition('five-searches', tutorialGraph());
    const runId = await c.api.startRun(definitionId, { topic: 'tides' });
    const view = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
    expect(view.run.status).toBe('Completed');

    const sources = ['encyclopedia', 'news', 'papers', 'forums', 'patents'];
    // stored documents come back with their members in key order (as jsonb keeps them)
    const findings = sources.map((source) => ({ about: 'tides', source }));
    const { state } = await c.api.client.runs.state(runId, {});
    expect(state).toEqual({ topic: 'tides', findings });
    expect(view.output).toEqual({ outcome: 'done', result: state });

    const prompt = llm.requests
      .flatMap((r) => r.body.messages as Message[])
      .find((m) => m.role === 'user' && String(m.content).startsWith('Summarise what the searches found about tides'));
    expect(prompt?.content).toBe(`Summarise what the searches found about tides: ${JSON.stringify(findings)}`);
  }, 90_000);
});
