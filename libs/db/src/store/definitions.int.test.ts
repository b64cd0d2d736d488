import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import {
  DefinitionRefsMissingError,
  decodePageCursor,
  deleteDefinition,
  duplicateDefinition,
  existingDefinitionIds,
  getDefinition,
  getDefinitionPlanGraph,
  insertDefinition,
  listDefinitions,
  updateDefinition,
  type NewDefinition,
} from './definitions';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const PLAN = { schemaVersion: 1, kind: 'Standard', nodes: [], edges: [] };

function newDef(tenantId: string, name: string): NewDefinition {
  return {
    id: randomUUID(),
    tenantId,
    name,
    description: null,
    kind: 'Standard',
    graphJson: '{"nodes":[],"edges":[],"big":9007199254740993}',
    planGraphJson: JSON.stringify(PLAN),
    graphHash: 'h',
    nodeCount: 0,
  };
}

describe('definitions store', () => {
  it('pages through rows sharing a millisecond (or a timestamp) without repeating or skipping any', async () => {
    const tenant = 'pager';
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await insertDefinition(db.pool, newDef(tenant, `d${i}`))).id);
    // microseconds apart inside one millisecond, and two rows on the very same instant
    await db.pool.query(
      `UPDATE definitions SET created_at = '2026-01-01T00:00:00.123Z'::timestamptz + make_interval(secs => (ord % 5) / 1e6)
       FROM (SELECT id AS did, row_number() OVER (ORDER BY id) AS ord FROM definitions WHERE tenant_id = $1) o
       WHERE id = o.did`,
      [tenant],
    );
    const seen: string[] = [];
    let after: { createdKey: string; id: string } | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const page = await listDefinitions(db.pool, tenant, 2, after);
      seen.push(...page.items.map((d) => d.id));
      if (page.nextCursor === null) break;
      after = decodePageCursor(page.nextCursor);
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(ids));
  });

  it('refuses malformed cursors', () => {
    expect(decodePageCursor('garbage')).toBeNull();
    expect(decodePageCursor(Buffer.from('2026-01-01T00:00:00.000000|nope').toString('base64url'))).toBeNull();
  });

  it('refuses cursors whose timestamp names no instant (month 13, February 30, year 0000, hour 24) and reads a real one', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const date of ['9999-99-99T99:99:99.999999', '2026-13-01T00:00:00.000000', '2026-02-30T00:00:00.000000', '0000-01-01T00:00:00.000000', '2026-01-01T24:00:00.000000']) {
      expect({ date, cursor: decodePageCursor(Buffer.from(`${date}|${id}`).toString('base64url')) }).toEqual({ date, cursor: null });
    }
    const real = decodePageCursor(Buffer.from(`2024-02-29T23:59:59.999999|${id}`).toString('base64url'));
    expect(real).toEqual({ createdKey: '2024-02-29T23:59:59.999999', id });
    expect((await listDefinitions(db.pool, 't1', 5, real)).items).toEqual(expect.any(Array));
  });

  it('keeps the stored document exact and scopes reads to the tenant', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'exact'));
    const read = await getDefinition(db.pool, 't1', d.id);
    expect(String((read?.graph as { big: unknown }).big)).toBe('9007199254740993'); // a JsonNumber holding the exact token
    expect(await getDefinition(db.pool, 't2', d.id)).toBeNull();
  });

  it('reads the parsed graph model a run would pin, at the current version, for the owning tenant only', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'plan'));
    expect(await getDefinitionPlanGraph(db.pool, 't1', d.id)).toEqual({ version: 1, planGraph: PLAN });
    const plan2 = { ...PLAN, kind: 'Chat' };
    await updateDefinition(db.pool, 't1', d.id, 1, { planGraphJson: JSON.stringify(plan2) });
    expect(await getDefinitionPlanGraph(db.pool, 't1', d.id)).toEqual({ version: 2, planGraph: plan2 });
    expect(await getDefinitionPlanGraph(db.pool, 't2', d.id)).toBeNull();
  });

  it('updates only at the expected version and tells a conflict from an absent row', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'cas'));
    const v2 = await updateDefinition(db.pool, 't1', d.id, 1, { name: 'cas2', description: 'now described' });
    expect(v2).toMatchObject({ version: 2, name: 'cas2', description: 'now described' });
    expect(await updateDefinition(db.pool, 't1', d.id, 1, { name: 'stale' })).toBe('conflict');
    expect(await updateDefinition(db.pool, 't2', d.id, 2, { name: 'other' })).toBeNull();
    const kept = await updateDefinition(db.pool, 't1', d.id, 2, {});
    expect(kept).toMatchObject({ version: 3, description: 'now described' });
  });

  it('waits for a run creation holding the definition FOR SHARE, then refuses the delete as in use', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'race'));
    const creator = await db.pool.connect();
    try {
      await creator.query('BEGIN');
      await creator.query(`SELECT 1 FROM definitions WHERE id = $1 FOR SHARE`, [d.id]);
      const deleting = deleteDefinition(db.pool, 't1', d.id);
      await creator.query(
        `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard)
         VALUES ($1, 't1', $2, 1, '{}', '{}', 'h', 'Pending', 0)`,
        [randomUUID(), d.id],
      );
      await creator.query('COMMIT');
      expect(await deleting).toBe('inUse');
    } finally {
      creator.release();
    }
  });

  it('refuses to write a definition naming one the tenant does not have, and records the refs it names', async () => {
    const child = await insertDefinition(db.pool, newDef('t1', 'child'));
    const other = await insertDefinition(db.pool, newDef('t2', 'other-tenant'));
    const missing = randomUUID();
    await expect(insertDefinition(db.pool, { ...newDef('t1', 'bad'), refs: [child.id, missing] })).rejects.toMatchObject({
      code: 'DefinitionRefsMissing',
      missing: [missing],
    });
    await expect(insertDefinition(db.pool, { ...newDef('t1', 'cross'), refs: [other.id] })).rejects.toBeInstanceOf(DefinitionRefsMissingError);
    const parent = await insertDefinition(db.pool, { ...newDef('t1', 'parent'), refs: [child.id.toUpperCase()] });
    const stored = await db.pool.query(`SELECT refs FROM definitions WHERE id = $1`, [parent.id]);
    expect(stored.rows[0].refs).toEqual([child.id]);
    await expect(updateDefinition(db.pool, 't1', parent.id, 1, { refs: [missing] })).rejects.toMatchObject({ missing: [missing] });
    expect((await getDefinition(db.pool, 't1', parent.id))?.version).toBe(1);
    expect(await existingDefinitionIds(db.pool, 't1', [child.id.toUpperCase(), missing, 'not-a-uuid', other.id])).toEqual(new Set([child.id]));
  });

  it('refuses to delete a definition another definition of the tenant names, until that one stops naming it', async () => {
    const child = await insertDefinition(db.pool, newDef('t1', 'named'));
    const parent = await insertDefinition(db.pool, { ...newDef('t1', 'namer'), refs: [child.id] });
    const copy = await duplicateDefinition(db.pool, 't1', parent.id, randomUUID(), (n) => `${n} (copy)`);
    expect(await deleteDefinition(db.pool, 't1', child.id)).toEqual({
      referencedBy: [
        { id: parent.id, name: 'namer' },
        { id: copy!.id, name: 'namer (copy)' },
      ],
    });
    expect(await updateDefinition(db.pool, 't1', parent.id, 1, { refs: [] })).toMatchObject({ version: 2 });
    expect(await deleteDefinition(db.pool, 't1', copy!.id)).toBe('deleted');
    expect(await deleteDefinition(db.pool, 't1', child.id)).toBe('deleted');
  });

  it('waits for a definition write naming the definition, then refuses the delete; a write after the delete is refused', async () => {
    const child = await insertDefinition(db.pool, newDef('t1', 'raced'));
    const writer = await db.pool.connect();
    try {
      await writer.query('BEGIN');
      const parentId = (await insertDefinition(writer, { ...newDef('t1', 'racer'), refs: [child.id] })).id;
      const deleting = deleteDefinition(db.pool, 't1', child.id);
      await writer.query('COMMIT');
      expect(await deleting).toEqual({ referencedBy: [{ id: parentId, name: 'racer' }] });
    } finally {
      writer.release();
    }
    const lone = await insertDefinition(db.pool, newDef('t1', 'lone'));
    expect(await deleteDefinition(db.pool, 't1', lone.id)).toBe('deleted');
    await expect(insertDefinition(db.pool, { ...newDef('t1', 'late'), refs: [lone.id] })).rejects.toBeInstanceOf(DefinitionRefsMissingError);
  });

  it('deletes an unpinned definition once, then reports it absent', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'gone'));
    expect(await deleteDefinition(db.pool, 't2', d.id)).toBe('notFound');
    expect(await deleteDefinition(db.pool, 't1', d.id)).toBe('deleted');
    expect(await deleteDefinition(db.pool, 't1', d.id)).toBe('notFound');
  });
});
