/**
 * The tenant-A fixtures the fuzzer aims at: a definition with a Running run whose nodes sit
 * in every state a verb acts on, a finished run, a Chat definition and a conversation.
 * Node states are set with SQL (no dispatcher runs). Not a test file.
 */
import { chatGraph, createDefinition, lineGraph, startRun, type Harness } from '../harness';
import type { Fixtures } from './fuzz-cases';

const KEYS = ['start', 'agent', 'llm', 't', 't2', 't3', 'gate', 'end'];

/** start → agent → llm → t → t2 → t3 → gate → end. */
function mainGraph() {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'agent', kind: 'Agent', config: { instructions: 'help' } },
      { key: 'llm', kind: 'LlmCall', config: { prompt: 'hello' } },
      { key: 't', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 't2', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 't3', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 'gate', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve'] } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: KEYS.slice(1).map((to, i) => ({ key: `e${i + 1}`, from: KEYS[i]!, to })),
  };
}

let made = 0;

/** Creates fresh fixtures as tenant A (each route gets its own, so one route's cancel does not blunt the next). */
export async function createFixtures(h: Harness): Promise<Fixtures> {
  const n = ++made;
  const q = (sql: string, params: unknown[] = []) => h.db.pool.query(sql, params);
  const setNode = (run: string, key: string, status: string, extra = '') =>
    q(`UPDATE node_runs SET status = $3, attempt = CASE WHEN $3 = 'Pending' THEN 0 ELSE 1 END ${extra} WHERE run_id = $1 AND node_key = $2`, [run, key, status]);
  const defId = await createDefinition(h, mainGraph(), 'fuzz-main');
  const runId = await startRun(h, defId, { requestId: `fuzz-main-${n}` });
  await q(`UPDATE runs SET status = 'Running' WHERE id = $1`, [runId]);
  await setNode(runId, 'start', 'Succeeded');
  await setNode(runId, 'agent', 'Failed');
  await setNode(runId, 'llm', 'Running');
  await setNode(runId, 'gate', 'WaitingForApproval', `, pending_decision_kind = 'Approve'`);
  const lineDef = await createDefinition(h, lineGraph(), 'fuzz-line');
  const doneRunId = await startRun(h, lineDef);
  await q(`UPDATE runs SET status = 'Completed', finished_at = now() WHERE id = $1`, [doneRunId]);
  const chatDefId = await createDefinition(h, chatGraph(), 'fuzz-chat');
  const convId = `fuzz-conv-${n}`;
  const sent = await h.call('POST', `/v1/conversations/${convId}/messages`, { body: { definitionId: chatDefId, text: 'hi', requestId: `fuzz-conv-${n}` } });
  if (sent.status !== 202) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
  return { defId, chatDefId, runId, doneRunId, convId, nodeKeys: KEYS, edgeKeys: KEYS.slice(1).map((_, i) => `e${i + 1}`) };
}
