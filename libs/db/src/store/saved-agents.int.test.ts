import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { configureEncryption } from '../crypto';
import {
  createSavedAgent,
  decodeAgentCursor,
  deleteSavedAgent,
  getSavedAgent,
  listSavedAgents,
  listSavedAgentVersions,
  pinSavedAgents,
  savedAgentCatalog,
  SavedAgentNameTakenError,
  updateSavedAgent,
} from './saved-agents';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(() => configureEncryption(null));

const members = (instructions: string) => ({ instructions, tools: ['echo'], maxIterations: 3 });

describe('saved agents store', () => {
  it('saves a new version on every update and reads any version back', async () => {
    const a = await createSavedAgent(db.pool, 't1', { name: 'triage', members: members('v1 text') });
    expect(a).toMatchObject({ name: 'triage', version: 1, latestVersion: 1, members: members('v1 text') });
    const b = await updateSavedAgent(db.pool, 't1', a.id, { name: 'triage', members: members('v2 text') });
    expect(b).toMatchObject({ version: 2, latestVersion: 2, members: members('v2 text') });
    expect((await getSavedAgent(db.pool, 't1', a.id, 1))?.members).toEqual(members('v1 text'));
    expect(await getSavedAgent(db.pool, 't1', a.id, 3)).toBeNull();
    expect((await listSavedAgentVersions(db.pool, 't1', a.id, 10, null))?.items.map((v) => v.version)).toEqual([2, 1]);
  });

  it("keeps names unique per tenant and reads another tenant's agent as absent", async () => {
    const a = await createSavedAgent(db.pool, 't2', { name: 'dup', members: members('x') });
    await expect(createSavedAgent(db.pool, 't2', { name: 'dup', members: members('y') })).rejects.toBeInstanceOf(SavedAgentNameTakenError);
    await createSavedAgent(db.pool, 't3', { name: 'dup', members: members('y') });
    expect(await getSavedAgent(db.pool, 't3', a.id)).toBeNull();
    expect(await updateSavedAgent(db.pool, 't3', a.id, { name: 'dup', members: members('z') })).toBeNull();
    expect(await deleteSavedAgent(db.pool, 't3', a.id)).toBe(false);
    expect(await getSavedAgent(db.pool, 't2', 'not-an-id')).toBeNull();
  });

  it('pages agents by name', async () => {
    for (const n of ['c', 'a', 'b']) await createSavedAgent(db.pool, 't4', { name: n, members: members(n) });
    const first = await listSavedAgents(db.pool, 't4', 2, null);
    expect(first.items.map((i) => i.name)).toEqual(['a', 'b']);
    const second = await listSavedAgents(db.pool, 't4', 2, decodeAgentCursor(first.nextCursor ?? ''));
    expect(second).toMatchObject({ items: [{ name: 'c' }], nextCursor: null });
  });

  it('pins the latest version or the one asked for, and names what is missing', async () => {
    const a = await createSavedAgent(db.pool, 't5', { name: 'p', members: members('one') });
    await updateSavedAgent(db.pool, 't5', a.id, { name: 'p', members: members('two') });
    const gone = randomUUID();
    const out = await pinSavedAgents(db.pool, 't5', [
      { nodeKey: 'n1', id: a.id, version: null },
      { nodeKey: 'n2', id: a.id, version: 1 },
      { nodeKey: 'n3', id: a.id, version: 9 },
      { nodeKey: 'n4', id: gone, version: null },
    ]);
    expect(out.pins).toEqual({ n1: { id: a.id, version: 2 }, n2: { id: a.id, version: 1 } });
    expect(out.missing.map((m) => m.nodeKey)).toEqual(['n3', 'n4']);
    expect(await savedAgentCatalog(db.pool, 't5', [a.id, gone, 'x'])).toEqual(new Map([[a.id, 2]]));
  });

  it('seals members at rest when encryption is on', async () => {
    configureEncryption('a'.repeat(64));
    const a = await createSavedAgent(db.pool, 't6', { name: 's', members: members('secret words') });
    const raw = await db.pool.query<{ m: string }>('SELECT members::text AS m FROM saved_agent_versions WHERE agent_id = $1', [a.id]);
    expect(raw.rows[0]?.m).not.toContain('secret words');
    expect((await getSavedAgent(db.pool, 't6', a.id))?.members).toEqual(members('secret words'));
  });
});
