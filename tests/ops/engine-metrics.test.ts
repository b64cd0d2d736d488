/**
 * The engine metrics of issue #18, scraped from the REAL processes (API, dispatcher, tool and
 * LLM workers, each on its own ops port) before and after a run executes: each named series
 * exists and moves. The run is Start → LlmCall (the built-in scripted provider) → Tool (a 1 s wait)
 * → End, watched through the live channel so sockets and pings move too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '@flowline/graph';
import { startE2eCluster, waitFor, type E2eCluster } from '@flowline/testing';

const llmThenTool = {
  schemaVersion: 1,
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'summarise', kind: 'LlmCall', config: { systemPrompt: 'One sentence.', prompt: 'Summarise the data block.', inputBindings: { text: 'run.input.text' } } },
    // a second's wait: the run is still live when the test's live subscription is in place (an
    // echo let a fast host finish the run before the subscription, and no ping was ever sent)
    { key: 'echo', kind: 'Tool', config: { toolName: 'wait', arguments: { ms: 1000 } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'summarise' },
    { key: 'e2', from: 'summarise', to: 'echo' },
    { key: 'e3', from: 'echo', to: 'end' },
  ],
} satisfies Json;

/** The ops port a process printed at boot (`ops port listening`), by its cluster label; waits for the line (a worker may print it after the API answers). */
async function opsPortOf(lines: string[], label: string): Promise<number> {
  const find = () => {
    for (const l of lines) {
      if (!l.includes(`[${label}]`)) continue;
      const m = /"port":(\d+),"msg":"ops port listening/.exec(l);
      if (m) return Number(m[1]);
    }
    return null;
  };
  return waitFor(find, { timeoutMs: 60_000, intervalMs: 100, description: `the ops port line of ${label}` });
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  return res.text();
}

/** The sum of every sample of `name` whose labels include `labels` (a metric absent: null). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  let found = false;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    found = true;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return found ? sum : null;
}

describe('engine metrics on the real processes', () => {
  let c: E2eCluster;
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1, env: { OPS_PORT: '0', LOG_LEVEL: 'info' } });
    for (const label of ['dispatcher-1', 'worker-tool-1', 'worker-llm-1']) {
      urls[label] = `http://127.0.0.1:${await opsPortOf(c.lines, label)}/metrics`;
    }
    urls.api = `${c.cluster.apiUrl}/metrics`;
  }, 120_000);

  afterAll(async () => {
    await c?.close();
  });

  it('each named metric exists and moves when a run executes', async () => {
    const before = {
      api: await scrape(urls.api!),
      dispatcher: await scrape(urls['dispatcher-1']!),
      llm: await scrape(urls['worker-llm-1']!),
    };
    // present from the start (a counter without labels, a gauge read at scrape time)
    expect(sample(before.api, 'flowline_live_sockets')).toBe(0);
    expect(sample(before.api, 'flowline_live_pings_total')).toBe(0);
    expect(sample(before.dispatcher, 'flowline_dispatcher_shards_owned', { dispatcher: 'dispatcher-1' })).toBe(8);
    expect(sample(before.dispatcher, 'flowline_shard_lease_renew_failures_total', { dispatcher: 'dispatcher-1' })).toBe(0);
    expect(sample(before.dispatcher, 'flowline_inflight_healed_total', { dispatcher: 'dispatcher-1' })).toBe(0);

    const definitionId = await c.api.createDefinition('metrics', llmThenTool);
    const runId = await c.api.startRun(definitionId, { text: 'Flowline runs graphs durably.' });
    const sub = c.api.client.subscribeRun(runId, 0, () => undefined);
    await sub.ready;
    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 40_000, 'run completed');
    expect(done.run.status).toBe('Completed');
    const during = await scrape(urls.api!);
    expect(sample(during, 'flowline_live_sockets')).toBe(1);
    await sub.close();

    const after = {
      api: await scrape(urls.api!),
      dispatcher: await scrape(urls['dispatcher-1']!),
      llm: await scrape(urls['worker-llm-1']!),
    };
    const moved = (text: string, was: string, name: string, labels: Record<string, string> = {}) =>
      (sample(text, name, labels) ?? 0) - (sample(was, name, labels) ?? 0);

    expect(moved(after.api, before.api, 'flowline_runs_created_total', { tenant: 'default' })).toBe(1);
    expect(moved(after.api, before.api, 'flowline_live_pings_total')).toBeGreaterThan(0);
    expect(moved(after.dispatcher, before.dispatcher, 'flowline_runs_finished_total', { status: 'Completed', tenant: 'default' })).toBe(1);
    expect(moved(after.dispatcher, before.dispatcher, 'flowline_node_attempts_total', { kind: 'LlmCall', outcome: 'Succeeded' })).toBe(1);
    expect(moved(after.dispatcher, before.dispatcher, 'flowline_node_attempts_total', { kind: 'Tool', outcome: 'Succeeded' })).toBe(1);
    expect(moved(after.dispatcher, before.dispatcher, 'flowline_tick_duration_seconds_count')).toBeGreaterThan(0);
    expect(moved(after.dispatcher, before.dispatcher, 'flowline_tick_batch_size_sum')).toBeGreaterThan(0);
    // the LlmCall's result → the Tool's admission, and the Tool's → End (nothing enqueued: not a hop)
    expect(moved(after.dispatcher, before.dispatcher, 'flowline_hop_latency_seconds_count')).toBe(1);
    expect(moved(after.llm, before.llm, 'flowline_provider_admission_wait_seconds_count')).toBe(1);
    expect(moved(after.llm, before.llm, 'flowline_provider_tokens_total', { direction: 'input' })).toBeGreaterThan(0);
    expect(moved(after.llm, before.llm, 'flowline_provider_tokens_total', { direction: 'output' })).toBeGreaterThan(0);
    expect(sample(after.llm, 'flowline_provider_admission_waits_total')).toBeNull();
  }, 90_000);
});
