import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityStreamKey } from '@flowline/queue';
import { KEYS, createDefinition, lineGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ eventReplayLimit: 2 });
});
afterAll(async () => {
  await h.close();
});

interface Frame {
  id: string;
  event: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each frame kind is asserted member by member
  data: any;
}

/** An SSE frame reader: `take(n)` resolves with the next `n` frames (fewer if the stream ended). */
function frameReader(res: Response) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const ready: Frame[] = [];
  let buf = '';
  let ended = false;
  return {
    async take(count: number): Promise<Frame[]> {
      while (ready.length < count && !ended) {
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        buf += value;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const f: Record<string, string> = {};
          for (const line of block.split('\n')) {
            const at = line.indexOf(':');
            if (at > 0) f[line.slice(0, at)] = line.slice(at + 1).trimStart();
          }
          if (f.event) ready.push({ id: f.id!, event: f.event, data: JSON.parse(f.data!) });
        }
      }
      return ready.splice(0, count);
    },
    close: () => reader.cancel().catch(() => undefined),
  };
}

async function addEvents(runId: string, from: number, to: number, kind: string): Promise<void> {
  await h.db.pool.query(
    `INSERT INTO events (run_id, seq, kind, node_key, detail) SELECT $1, s, $4, 'start', '{}'::jsonb FROM generate_series($2::int, $3::int) s`,
    [runId, from, to, kind],
  );
  await h.db.pool.query(`UPDATE runs SET last_seq = $2 WHERE id = $1`, [runId, to]);
}

describe('SSE stream', () => {
  it('replays runChanged frames from the events table across pages and then follows new events', async () => {
    const defId = await createDefinition(h, lineGraph(), 'sse');
    const runId = await startRun(h, defId);
    await addEvents(runId, 2, 4, 'node.queued');
    const res = await h.app.request(`/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const stream = frameReader(res);
    // seq 1 (a run event), then seqs 2-4 (node events): a runChanged frame each, each node event followed by its node frame
    const replayed = await stream.take(7);
    // written after the replay was sent: reached by polling the events table
    await addEvents(runId, 5, 6, 'gate.requested');
    const all = [...replayed, ...(await stream.take(4))];
    await stream.close();
    const frames = all.filter((f) => f.event === 'runChanged');
    expect(frames.map((f) => f.id)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(frames[0]!.data).toEqual({ runId, seq: 1, kind: 'run' });
    expect(frames[1]!.data).toEqual({ runId, seq: 2, kind: 'node' });
    expect(frames[5]!.data).toEqual({ runId, seq: 6, kind: 'gate' });
    // what each node or gate event did to its node, under the same id
    const nodes = all.filter((f) => f.event === 'node');
    expect(nodes.map((f) => [f.id, f.data.status])).toEqual([['2', 'Queued'], ['3', 'Queued'], ['4', 'Queued'], ['5', 'WaitingForApproval'], ['6', 'WaitingForApproval']]);
    expect(nodes[0]!.data).toEqual({ runId, seq: 2, nodeKey: 'start', status: 'Queued', event: 'node.queued' });
  });

  it('resumes after Last-Event-ID and ends once the run is terminal and fully sent', async () => {
    const defId = await createDefinition(h, lineGraph(), 'resume');
    const runId = await startRun(h, defId);
    await addEvents(runId, 2, 5, 'node.completed');
    await h.db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [runId]);
    const res = await h.app.request(`/v1/runs/${runId}/stream`, {
      headers: { authorization: `Bearer ${KEYS.a}`, 'last-event-id': '3' },
    });
    const frames = await frameReader(res).take(100);
    expect(frames.map((f) => `${f.event} ${f.id}`)).toEqual(['runChanged 4', 'node 4', 'runChanged 5', 'node 5', 'run.result 5.end']);
    // the final frame says how the run ended; resuming after it sends nothing more
    expect(frames[4]).toMatchObject({ id: '5.end', event: 'run.result', data: { runId, status: 'Completed' } });
    const after = await h.app.request(`/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}`, 'last-event-id': frames[4]!.id } });
    expect(after.status).toBe(204);
  });

  it('relays the live activity of a running model node as activity frames, and resumes exactly after one', async () => {
    const defId = await createDefinition(h, lineGraph(), 'activity');
    const runId = await startRun(h, defId);
    // a running LlmCall-like row of the run, as the dispatcher leaves it, and its invocation's stream
    const invocationId = '00000000-0000-4000-8000-0000000000a1';
    await h.db.pool.query(`UPDATE node_runs SET status = 'Running', kind = 'LlmCall', attempt = 1, invocation_id = $2 WHERE run_id = $1 AND node_key = 'end'`, [runId, invocationId]);
    const key = activityStreamKey(invocationId, h.prefix);
    for (const [type, text] of [['phase', 'calling'], ['content', 'Hel'], ['content', 'lo'], ['reasoning', 'hmm']]) await h.redis.xadd(key, '*', 'type', type!, 'text', text!);
    const res = await h.app.request(`/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}` } });
    const reader = frameReader(res);
    const frames = await reader.take(5);
    await reader.close();
    expect(frames[0]!.event).toBe('runChanged');
    const activity = frames.slice(1);
    expect(activity.map((f) => f.event)).toEqual(['activity', 'activity', 'activity', 'activity']);
    expect(activity.map((f) => f.data)).toEqual([
      { runId, nodeKey: 'end', invocationId, offset: 0, type: 'phase', text: 'calling' },
      { runId, nodeKey: 'end', invocationId, offset: 1, type: 'content', text: 'Hel' },
      { runId, nodeKey: 'end', invocationId, offset: 2, type: 'content', text: 'lo' },
      { runId, nodeKey: 'end', invocationId, offset: 3, type: 'reasoning', text: 'hmm' },
    ]);
    // resumed after the second delta: the rest, then what lands later, then the end
    const resumed = await h.app.request(`/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}`, 'last-event-id': activity[1]!.id } });
    const rest = frameReader(resumed);
    expect((await rest.take(2)).map((f) => f.data)).toMatchObject([{ offset: 2, text: 'lo' }, { offset: 3, text: 'hmm' }]);
    await h.redis.xadd(key, '*', 'type', 'terminal');
    await h.db.pool.query(`UPDATE node_runs SET status = 'Succeeded' WHERE run_id = $1 AND node_key = 'end'`, [runId]);
    await h.db.pool.query(`UPDATE runs SET status = 'Completed', output = '{"outcome":"done","result":null}'::jsonb WHERE id = $1`, [runId]);
    const tail = await rest.take(10);
    expect(tail.map((f) => f.event)).toEqual(['activity', 'run.result']);
    expect(tail[0]!.data).toMatchObject({ offset: 4, type: 'terminal' });
    expect(tail[1]!.data).toEqual({ runId, status: 'Completed', failureClass: 'None', reason: null, output: { outcome: 'done', result: null } });
  });

  it("relays a running Tool node's activity (an MCP tool's progress) as activity frames", async () => {
    const defId = await createDefinition(h, lineGraph(), 'tool-activity');
    const runId = await startRun(h, defId);
    const invocationId = '00000000-0000-4000-8000-0000000000b2';
    await h.db.pool.query(`UPDATE node_runs SET status = 'Running', kind = 'Tool', attempt = 1, invocation_id = $2 WHERE run_id = $1 AND node_key = 'end'`, [runId, invocationId]);
    const key = activityStreamKey(invocationId, h.prefix);
    for (const text of ['progress 1/2', 'progress 2/2']) await h.redis.xadd(key, '*', 'type', 'phase', 'text', text);
    const res = await h.app.request(`/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}` } });
    const reader = frameReader(res);
    const frames = await reader.take(3);
    await reader.close();
    expect(frames.slice(1).map((f) => f.data)).toEqual([
      { runId, nodeKey: 'end', invocationId, offset: 0, type: 'phase', text: 'progress 1/2' },
      { runId, nodeKey: 'end', invocationId, offset: 1, type: 'phase', text: 'progress 2/2' },
    ]);
  });

  it('answers 404 to another tenant and 401 without a key', async () => {
    const defId = await createDefinition(h, lineGraph(), 'private');
    const runId = await startRun(h, defId);
    expect((await h.call('GET', `/v1/runs/${runId}/stream`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/runs/${runId}/stream`, { token: null })).status).toBe(401);
  });
});
