/**
 * One saved version as an operator retires it, through the real app and dispatcher
 * (in-process), Postgres and Redis: `GET /v1/definitions/{id}/versions/{v}` counts the live and
 * parked runs pinned to it and names what it needs that is gone; `DELETE` of it is refused while
 * runs, aliases or the latest-version rule hold it, and allowed once its runs are migrated;
 * a retired version is hidden from the list and refused to starts, aliases and migrations, and
 * still read (history); a run of a version whose MCP server is gone shows a blocker naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { KEYS, startHarness, type Harness } from '../../../services/api/test/harness';
import { startInProcessLanes, type InProcessLanes } from './in-process-lanes';
import { defineGraph, updateGraph, type Body } from './run-calls';

const SHARD_COUNT = 4;
const gate = (label: string) => ({
  nodes: [
    { key: 'start', kind: 'Start', label },
    { key: 'p', kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [{ key: 'e1', from: 'start', to: 'p' }, { key: 'e2', from: 'p', to: 'end' }],
});
const mcpTool = (server: string) => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'call', kind: 'Tool', config: { toolName: `mcp:${server}/search`, arguments: { q: 'x' } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [{ key: 'a', from: 'start', to: 'call' }, { key: 'b', from: 'call', to: 'end' }],
});

let h: Harness;
let lanes: InProcessLanes | null = null;
beforeAll(async () => {
  h = await startHarness({ shardCount: SHARD_COUNT });
  lanes = await startInProcessLanes(h, { id: 'retire-test', shardCount: SHARD_COUNT, toolWorker: false });
});
afterAll(async () => {
  await lanes?.stop();
  await h?.close();
});

const version = async (def: string, v: number) => (await h.call('GET', `/v1/definitions/${def}/versions/${v}`)).body as Body;
const retire = (def: string, v: number) => h.call('DELETE', `/v1/definitions/${def}/versions/${v}`);

describe('a saved version', () => {
  it('counts its live and parked runs, refuses retirement while runs or aliases pin it or while it is the latest, and retires once they moved', async () => {
    const def = await defineGraph(h, gate('v1'), 'retire');
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) runs.push((await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {} } })).body.runId as string);
    await waitFor(async () => (await version(def, 1)).runs.parked === 2, { timeoutMs: 20_000, intervalMs: 50, description: 'both runs parked on p' });
    await updateGraph(h, def, gate('v2'), 1);

    expect(await version(def, 1)).toMatchObject({ version: 1, retiredAt: null, runs: { live: 2, parked: 2 }, schedules: 0, aliases: [], unavailable: [] });
    const latest = await retire(def, 2);
    expect(latest.status).toBe(409);
    expect(latest.body.error).toMatchObject({ code: 'VersionIsLatest', details: [{ latest: 2 }] });
    const pinned = await retire(def, 1);
    expect(pinned.status).toBe(409);
    expect(pinned.body.error).toMatchObject({ code: 'VersionInUse', details: [{ liveRuns: 2, schedules: 0, aliases: [] }] });

    // migrate the runs away; an alias still holds the version
    for (const r of runs) expect((await h.call('POST', `/v1/runs/${r}/migrate`, { body: { toVersion: 2, dryRun: false } })).body.executed).toBe(true);
    expect((await h.call('PUT', `/v1/definitions/${def}/aliases/canary`, { body: { targets: [{ version: 1, percent: 10 }] } })).status).toBe(200);
    expect((await version(def, 1)).runs).toEqual({ live: 0, parked: 0 });
    expect((await retire(def, 1)).body.error).toMatchObject({ code: 'VersionInUse', details: [{ liveRuns: 0, aliases: ['canary'] }] });
    expect((await h.call('DELETE', `/v1/definitions/${def}/aliases/canary`)).status).toBe(204);

    expect((await retire(def, 1)).status).toBe(204);
    expect((await retire(def, 1)).status).toBe(204);
    // hidden from the list, refused to starts, aliases and migrations; still read, and diffed
    const list = await h.call('GET', `/v1/definitions/${def}/versions`);
    expect(list.body.items.map((v: Body) => v.version)).toEqual([2]);
    expect((await version(def, 1)).retiredAt).toEqual(expect.any(String));
    const start = await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {}, version: 1 } });
    expect(start.status).toBe(400);
    expect(start.body.error.details).toEqual([{ key: 'version', message: 'version 1 is retired' }]);
    expect((await h.call('PUT', `/v1/definitions/${def}/aliases/current`, { body: { version: 1 } })).status).toBe(400);
    expect((await h.call('POST', `/v1/runs/${runs[0]}/migrate`, { body: { toVersion: 1, dryRun: true } })).status).toBe(404);
    expect((await h.call('GET', `/v1/definitions/${def}/diff?from=1&to=2`)).status).toBe(200);
  });

  it('names what it needs that is no longer available: an MCP server deleted since it was saved', async () => {
    expect((await h.call('POST', '/v1/mcp-servers', { body: { name: 'fading', url: 'https://mcp.example/mcp', transport: 'streamable-http' } })).status).toBe(201);
    const def = await defineGraph(h, mcpTool('fading'), 'retire-mcp');
    expect((await version(def, 1)).unavailable).toEqual([]);
    expect((await h.call('DELETE', '/v1/mcp-servers/fading')).status).toBe(204);
    expect((await version(def, 1)).unavailable).toEqual([{ key: 'call', message: expect.stringContaining("unknown MCP server 'fading'") }]);
  });

  it("shows a run of such a version blocked on what is missing, never a silent wait on its lane", async () => {
    expect((await h.call('POST', '/v1/mcp-servers', { body: { name: 'vanishing', url: 'https://mcp.example/mcp', transport: 'streamable-http' } })).status).toBe(201);
    const def = await defineGraph(h, mcpTool('vanishing'), 'blocked-mcp');
    const runId = (await h.call('POST', `/v1/definitions/${def}/runs`, { body: { input: {} } })).body.runId as string;
    // no tool worker in this file: the call waits Queued on its lane
    const onLane = await waitFor(
      async () => {
        const b = (await h.call('GET', `/v1/runs/${runId}/blockers`)).body as Body;
        const call = (b.blockers as Body[]).find((x) => x.nodeKey === 'call');
        return call?.status === 'Queued' ? call : false;
      },
      { timeoutMs: 20_000, intervalMs: 50, description: 'call queued' },
    );
    expect(onLane.kind).not.toBe('unavailable');
    expect((await h.call('DELETE', '/v1/mcp-servers/vanishing')).status).toBe(204);
    const after = (await h.call('GET', `/v1/runs/${runId}/blockers`)).body as Body;
    expect((after.blockers as Body[]).find((x) => x.nodeKey === 'call')).toMatchObject({
      status: 'Queued', kind: 'unavailable', details: { missing: [expect.stringContaining("unknown MCP server 'vanishing'")] },
    });
    expect((await version(def, 1)).unavailable).toEqual([{ key: 'call', message: expect.stringContaining("unknown MCP server 'vanishing'") }]);
  });

  it('answers 404 for an unknown or malformed version, and for another tenant', async () => {
    const def = await defineGraph(h, gate('x'), 'retire-404');
    expect((await retire(def, 9)).status).toBe(404);
    expect((await h.call('DELETE', `/v1/definitions/${def}/versions/abc`)).status).toBe(404);
    expect((await h.call('DELETE', `/v1/definitions/${def}/versions/1`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', `/v1/definitions/${def}/versions/1`, { token: KEYS.b })).status).toBe(404);
  });
});
