import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  data: { runId: string; seq: number; kind: string };
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
    const replayed = await stream.take(4);
    // written after the replay was sent: reached by polling the events table
    await addEvents(runId, 5, 6, 'gate.requested');
    const frames = [...replayed, ...(await stream.take(2))];
    await stream.close();
    expect(frames.map((f) => f.id)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(frames.every((f) => f.event === 'runChanged')).toBe(true);
    expect(frames[0]!.data).toEqual({ runId, seq: 1, kind: 'run' });
    expect(frames[1]!.data).toEqual({ runId, seq: 2, kind: 'node' });
    expect(frames[5]!.data).toEqual({ runId, seq: 6, kind: 'gate' });
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
    expect(frames.map((f) => f.data.seq)).toEqual([4, 5]);
  });

  it('answers 404 to another tenant and 401 without a key', async () => {
    const defId = await createDefinition(h, lineGraph(), 'private');
    const runId = await startRun(h, defId);
    expect((await h.call('GET', `/v1/runs/${runId}/stream`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/runs/${runId}/stream`, { token: null })).status).toBe(401);
  });
});
