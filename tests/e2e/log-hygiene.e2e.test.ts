/**
 * No secret and no document content in any log line (issue 12 item 5, done-when): a whole
 * cluster (API, dispatcher, tool and LLM workers) runs at LOG_LEVEL debug with canary
 * secrets — an API key, LLM_API_KEY, ENCRYPTION_KEY, a password in DATABASE_URL — and
 * drives runs whose input, tool arguments and outputs, prompt, model answer, gate comment,
 * chat message, failing tool call, failing model call and a Postgres refusal answered 500
 * all carry a canary document string; processes are also booted with invalid URL options
 * holding a password. Every line every process wrote is scanned for every canary.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type FlowlineClient } from '@flowline/client';
import { spawnService, startFakeLlm, type FakeLlmServer, startE2eCluster, type E2eCluster } from '@flowline/testing';

const tag = randomBytes(4).toString('hex');
const SECRETS = {
  apiKey: `canary-apikey-${tag}`,
  llmKey: `canary-llmkey-${tag}`,
  dbPassword: `canary-dbpw-${tag}`,
  encryptionKey: randomBytes(32).toString('hex'),
  bootPassword: `canary-bootpw-${tag}`,
};
/** the document canary: every document the runs carry holds it */
const DOC = `canary-doc-${tag}`;
const CANARIES = [...Object.values(SECRETS), DOC];

let c: E2eCluster;
let llm: FakeLlmServer;
let api: FlowlineClient;

beforeAll(async () => {
  llm = await startFakeLlm({
    handler: (req) => {
      const text = JSON.stringify(req.body.messages);
      // a prompt that asks to fail gets a provider error whose body quotes the document
      if (text.includes('please fail')) return { status: 400, body: { error: { message: `cannot do ${DOC}`, type: 'invalid_request_error' } } };
      return { content: `the answer about ${DOC}` };
    },
  });
  c = await startE2eCluster({
    dispatchers: 1,
    toolWorkers: 1,
    llmWorkers: 1,
    env: {
      LOG_LEVEL: 'debug',
      API_KEYS: `tenantA:${SECRETS.apiKey}`,
      ENCRYPTION_KEY: SECRETS.encryptionKey,
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_API_KEY: SECRETS.llmKey,
      LLM_MODEL: 'fake-model',
    },
    // trust authentication accepts any password: the processes connect with the canary in their URL
    mapDatabaseUrl: (url) => {
      const u = new URL(url);
      u.password = SECRETS.dbPassword;
      return u.toString();
    },
  });
  api = createClient({ baseUrl: c.cluster.apiUrl, apiKey: SECRETS.apiKey });
}, 120_000);

afterAll(async () => {
  api?.close();
  await c?.close();
  await llm?.close();
});

describe('log lines of a whole cluster', () => {
  it('carry no secret and no document content, through runs, failures, a 500 and boots with bad URL options', async () => {
    // 1. a run through a tool, a model call and a gate decided with a comment
    const def = await api.definitions.create({
      name: 'hygiene',
      graph: {
        nodes: [
          { key: 'start', kind: 'Start' },
          { key: 'tool', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { doc: 'run.input.doc' } } },
          { key: 'ask', kind: 'LlmCall', config: { prompt: `Summarise ${DOC}.`, inputBindings: { doc: 'run.input.doc' } } },
          { key: 'gate', kind: 'Pause', config: { prompt: `approve ${DOC}?`, allowedDecisions: ['Approve', 'Reject'], requireComment: true } },
          { key: 'end', kind: 'End', config: { outcome: 'done' } },
        ],
        edges: [
          { key: 'e1', from: 'start', to: 'tool' },
          { key: 'e2', from: 'tool', to: 'ask' },
          { key: 'e3', from: 'ask', to: 'gate' },
          { key: 'e4', from: 'gate', to: 'end' },
        ],
      },
    });
    const run = await api.runs.start(def.id, { requestId: `req-${DOC}`, input: { doc: DOC } });
    await waitForRun(run.runId, (s, nodes) => s === 'WaitingForApproval' && nodes.some((n) => n.nodeKey === 'gate' && n.status === 'WaitingForApproval'));
    await api.runs.decide(run.runId, 'gate', { operationId: `op-${DOC}`, decision: 'Approve', comment: `ok ${DOC}` });
    await waitForRun(run.runId, (s) => s === 'Completed');

    // 2. failures: a tool call and a model call that fail with the document in their arguments and answer
    const failing = await api.definitions.create({
      name: 'failing',
      graph: {
        nodes: [
          { key: 'start', kind: 'Start' },
          { key: 'flaky', kind: 'Tool', maxAttempts: 1, onError: 'Continue', config: { toolName: 'test_fail', arguments: { untilAttempt: 9, doc: DOC } } },
          { key: 'ask', kind: 'LlmCall', maxAttempts: 1, config: { prompt: `please fail ${DOC}` } },
          { key: 'end', kind: 'End', config: { outcome: 'done' } },
        ],
        edges: [
          { key: 'e1', from: 'start', to: 'flaky' },
          { key: 'e2', from: 'flaky', to: 'ask' },
          { key: 'e3', from: 'ask', to: 'end' },
        ],
      },
    });
    const failed = await api.runs.start(failing.id, { input: { doc: DOC } });
    await waitForRun(failed.runId, (s) => s === 'Failed');

    // 3. a chat message
    const chat = await api.definitions.create({
      name: 'chat',
      graph: {
        kind: 'Chat',
        nodes: [
          { key: 'start', kind: 'Start' },
          { key: 'answer', kind: 'LlmCall', config: { prompt: 'Answer the user.', inputBindings: { text: 'run.input.text' } } },
          { key: 'end', kind: 'End', config: { outcome: 'answered' } },
        ],
        edges: [
          { key: 'e1', from: 'start', to: 'answer' },
          { key: 'e2', from: 'answer', to: 'end' },
        ],
      },
    });
    const sent = await api.conversations.send(`conv-${tag}`, { definitionId: chat.id, text: `hello ${DOC}`, requestId: `send-${DOC}` });
    await waitForRun(sent.runId, (s) => s === 'Completed');

    // 4. a 500: Postgres refuses the run insert with an error whose message, detail and hint quote the request
    await c.db.pool.query(`
      CREATE FUNCTION refuse_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused %', NEW.request_id USING DETAIL = NEW.request_id, HINT = NEW.request_id; END $$;
      CREATE TRIGGER refuse_run BEFORE INSERT ON runs FOR EACH ROW WHEN (NEW.request_id LIKE 'refuse-%') EXECUTE FUNCTION refuse_run();`);
    const refused = await api.send('POST', `/v1/definitions/${def.id}/runs`, { body: { requestId: `refuse-${DOC}`, input: { doc: DOC } } });
    expect(refused.status).toBe(500);
    await c.db.pool.query('DROP TRIGGER refuse_run ON runs; DROP FUNCTION refuse_run()');

    // 5. boots with invalid URL options holding a password: each process stops, naming the option
    const bad = `canary ${SECRETS.bootPassword}`;
    const boots: Array<{ service: string; env: Record<string, string> }> = [
      { service: 'api', env: { DATABASE_URL: `mysql://flow:${SECRETS.bootPassword}@db/app`, REDIS_URL: `http://:${SECRETS.bootPassword}@r:6379` } },
      { service: 'dispatcher', env: { DATABASE_URL: `postgres://flow:${bad}@db:notaport/app` } },
      { service: 'worker-llm', env: { LLM_BASE_URL: `ftp://u:${SECRETS.bootPassword}@llm/v1` } },
    ];
    const bootOutputs: string[] = [];
    for (const b of boots) {
      const p = await spawnService({ cwd: fileURLToPath(new URL(`../../services/${b.service}`, import.meta.url)), env: b.env, readyText: null });
      expect(await p.exited).toBe(1);
      bootOutputs.push(p.output());
    }
    expect(bootOutputs.join('\n')).toMatch(/DATABASE_URL/);
    expect(bootOutputs.join('\n')).toMatch(/LLM_BASE_URL/);

    // the scan: every line of every process, the boots' included
    const lines = [...c.lines, ...bootOutputs.flatMap((o) => o.split('\n'))];
    // the scan saw what it is about: every process logged (at debug), the 500, both failures
    for (const label of ['api', 'dispatcher-1', 'worker-tool-1', 'worker-llm-1']) expect(lines.some((l) => l.includes(`[${label}] {`))).toBe(true);
    for (const msg of ['request failed', 'model provider error', 'tool invocation finished', 'gate decision recorded']) {
      expect(lines.some((l) => l.includes(`"msg":"${msg}"`))).toBe(true);
    }
    const leaks = lines.filter((l) => CANARIES.some((k) => l.includes(k)));
    expect(leaks).toEqual([]);
  }, 180_000);
});

async function waitForRun(runId: string, pred: (status: string, nodes: Array<{ nodeKey: string; status: string }>) => boolean): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const v = await api.runs.get(runId);
    if (pred(v.run.status, v.nodeRuns)) return;
    if (Date.now() > until) throw new Error(`run ${runId} still ${v.run.status}: ${JSON.stringify(v.nodeRuns)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
