import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { deleteDefinition, duplicateDefinition, insertDefinition, updateDefinition, type NewDefinition } from './definitions';
import { MIGRATIONS_FOLDER } from '../migrate';
import { decodeVersionCursor, encodeVersionCursor, getDefinitionVersion, listDefinitionVersions } from './definition-versions';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const PLAN = { schemaVersion: 1, kind: 'Standard', nodes: [], edges: [] };

function newDef(tenantId: string, name: string, graphJson = '{"nodes":[],"edges":[],"v":1}'): NewDefinition {
  return { id: randomUUID(), tenantId, name, description: null, kind: 'Standard', graphJson, planGraphJson: JSON.stringify(PLAN), graphHash: 'h1', nodeCount: 0 };
}

const versionsOf = async (tenant: string, id: string) => (await listDefinitionVersions(db.pool, tenant, id, 200, null))?.items.map((v) => v.version);

describe('definition versions store', () => {
  it('records version 1 on create and each update as a new version, keeping every graph as it was saved', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'versioned'));
    const v2 = await updateDefinition(db.pool, 't1', d.id, 1, { graphJson: '{"nodes":[],"edges":[],"v":2,"big":9007199254740993}', graphHash: 'h2' });
    expect(v2).toMatchObject({ version: 2 });
    await updateDefinition(db.pool, 't1', d.id, 2, { name: 'renamed' });
    expect(await versionsOf('t1', d.id)).toEqual([3, 2, 1]);
    expect(await getDefinitionVersion(db.pool, 't1', d.id, 1)).toMatchObject({ version: 1, name: 'versioned', graphHash: 'h1', graph: { nodes: [], edges: [], v: 1 } });
    const two = await getDefinitionVersion(db.pool, 't1', d.id, 2);
    expect(two).toMatchObject({ name: 'versioned', graphHash: 'h2' });
    // the exact number a double cannot hold survives
    expect(String((two!.graph as { big: unknown }).big)).toBe('9007199254740993');
    expect(await getDefinitionVersion(db.pool, 't1', d.id, 3)).toMatchObject({ name: 'renamed', graph: two!.graph });
    expect(await getDefinitionVersion(db.pool, 't1', d.id, 4)).toBeNull();
  });

  it('records no version for a refused update (stale version)', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'stale'));
    await updateDefinition(db.pool, 't1', d.id, 1, { name: 'ok' });
    expect(await updateDefinition(db.pool, 't1', d.id, 1, { name: 'late' })).toBe('conflict');
    expect(await versionsOf('t1', d.id)).toEqual([2, 1]);
  });

  it('starts a duplicate at its own version 1', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'source'));
    await updateDefinition(db.pool, 't1', d.id, 1, { name: 'source2' });
    const copy = await duplicateDefinition(db.pool, 't1', d.id, randomUUID(), (n) => `${n} (copy)`);
    expect(await versionsOf('t1', copy!.id)).toEqual([1]);
    expect(await getDefinitionVersion(db.pool, 't1', copy!.id, 1)).toMatchObject({ name: 'source2 (copy)' });
  });

  it('pages newest first with a cursor, without repeating or skipping a version', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'paged'));
    for (let v = 1; v < 7; v++) await updateDefinition(db.pool, 't1', d.id, v, { name: `p${v}` });
    const seen: number[] = [];
    let cursor: number | null = null;
    for (;;) {
      const page = await listDefinitionVersions(db.pool, 't1', d.id, 3, cursor);
      seen.push(...page!.items.map((v) => v.version));
      if (!page!.nextCursor) break;
      cursor = decodeVersionCursor(page!.nextCursor);
    }
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(decodeVersionCursor(encodeVersionCursor(12))).toBe(12);
    for (const bad of ['', 'x', Buffer.from('v0').toString('base64url'), Buffer.from('v99999999999').toString('base64url')]) expect(decodeVersionCursor(bad)).toBeNull();
  });

  it('reads another tenant’s definition as absent, and removes the versions with the definition', async () => {
    const d = await insertDefinition(db.pool, newDef('t1', 'mine'));
    expect(await listDefinitionVersions(db.pool, 't2', d.id, 10, null)).toBeNull();
    expect(await getDefinitionVersion(db.pool, 't2', d.id, 1)).toBeNull();
    expect(await deleteDefinition(db.pool, 't1', d.id)).toBe('deleted');
    expect(await listDefinitionVersions(db.pool, 't1', d.id, 10, null)).toBeNull();
    const left = await db.pool.query(`SELECT count(*)::int AS n FROM definition_versions WHERE definition_id = $1`, [d.id]);
    expect(left.rows[0].n).toBe(0);
  });

  it('backfills the current version of every definition (the migration that adds the table)', async () => {
    const d = await insertDefinition(db.pool, newDef('t3', 'before-versions'));
    await updateDefinition(db.pool, 't3', d.id, 1, { name: 'current' });
    // as the table reads when the migration runs: no versions yet
    await db.pool.query(`DELETE FROM definition_versions`);
    const statements = readFileSync(join(MIGRATIONS_FOLDER, readdirSync(MIGRATIONS_FOLDER).find((f) => f.endsWith('_definition_versions.sql'))!), 'utf8').split('--> statement-breakpoint');
    await db.pool.query(statements.at(-1)!);
    expect(await versionsOf('t3', d.id)).toEqual([2]);
    expect(await getDefinitionVersion(db.pool, 't3', d.id, 2)).toMatchObject({ name: 'current', graph: { v: 1 } });
  });
});
