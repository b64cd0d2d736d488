import type { Graph } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { createSavedAgent, deleteSavedAgent, savedAgentForNode, SavedAgentsMissingError, updateSavedAgent } from '../src';
import { CHAIN, createRunOf, gnode, insertDefinition, insertRun } from './fixtures';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const agentGraph = (agentId: string): Graph => ({
  ...CHAIN,
  nodes: [gnode('start', 'Start'), { ...gnode('tool', 'Agent', 3), config: { agentDefinitionId: agentId } }, gnode('end', 'End')],
});
const members = (instructions: string) => ({ instructions });

describe('saved agent pins', () => {
  it('pins the latest version at run creation; a later update reaches only later runs', async () => {
    const agent = await createSavedAgent(db.pool, 't1', { name: 'pinned', members: members('one') });
    const graph = agentGraph(agent.id);
    const defId = await insertDefinition(db.pool, 't1', graph);
    const before = await createRunOf(db.pool, defId, graph, '{}');
    await updateSavedAgent(db.pool, 't1', agent.id, { name: 'pinned', members: members('two') });
    const after = await createRunOf(db.pool, defId, graph, '{}');
    const ref = { id: agent.id, version: null };
    expect(await savedAgentForNode(db.pool, before, 'tool', ref)).toMatchObject({ version: 1, members: members('one') });
    expect(await savedAgentForNode(db.pool, after, 'tool', ref)).toMatchObject({ version: 2, members: members('two') });
  });

  it('pins a run created without a pin (a child run) on first use, once', async () => {
    const agent = await createSavedAgent(db.pool, 't1', { name: 'lazy', members: members('one') });
    const defId = await insertDefinition(db.pool, 't1', agentGraph(agent.id));
    const child = await insertRun(db.pool, defId, { graph: agentGraph(agent.id) });
    const ref = { id: agent.id, version: null };
    expect(await savedAgentForNode(db.pool, child, 'tool', ref)).toMatchObject({ version: 1 });
    await updateSavedAgent(db.pool, 't1', agent.id, { name: 'lazy', members: members('two') });
    expect(await savedAgentForNode(db.pool, child, 'tool', ref)).toMatchObject({ version: 1, members: members('one') });
    const pins = await db.pool.query('SELECT agent_pins FROM runs WHERE id = $1', [child]);
    expect(pins.rows[0]?.agent_pins).toEqual({ tool: { id: agent.id, version: 1 } });
  });

  it("refuses a run creation naming a deleted agent, and answers null for a pinned run's deleted agent", async () => {
    const agent = await createSavedAgent(db.pool, 't1', { name: 'gone', members: members('one') });
    const graph = agentGraph(agent.id);
    const defId = await insertDefinition(db.pool, 't1', graph);
    const run = await createRunOf(db.pool, defId, graph, '{}');
    await deleteSavedAgent(db.pool, 't1', agent.id);
    await expect(createRunOf(db.pool, defId, graph, '{}')).rejects.toBeInstanceOf(SavedAgentsMissingError);
    expect(await savedAgentForNode(db.pool, run, 'tool', { id: agent.id, version: null })).toBeNull();
  });

  it("never reads another tenant's agent", async () => {
    const agent = await createSavedAgent(db.pool, 't2', { name: 'other', members: members('secret') });
    const defId = await insertDefinition(db.pool, 't1');
    const run = await insertRun(db.pool, defId);
    expect(await savedAgentForNode(db.pool, run, 'tool', { id: agent.id, version: null })).toBeNull();
  });
});
