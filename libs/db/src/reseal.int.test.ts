import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, insertRunRows, type TestDatabase } from '@flowline/testing';
import { configureEncryptionKeys, openJson } from './crypto';
import { checkEncryptionKeys, EncryptionKeyMissingError, olderKeysInUse, resealPass, SEALED_COLUMNS, staleValueCount } from './reseal';
import { appendAgentStep, loadAgentSteps } from './store/agent-steps';
import { createMcpServer, mcpServerForUse } from './store/mcp-servers';
import { recordNodeIntent } from './store/intents';
import { runDocAt } from './store/run-snapshots';
import { sealJsonText } from './crypto';

const K1 = randomBytes(32).toString('hex');
const K2 = randomBytes(32).toString('hex');
const ring = (current: string, ...ids: string[]) => configureEncryptionKeys({ keys: Object.fromEntries(ids.map((id) => [id, id === 'k1' ? K1 : K2])), current });

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(() => configureEncryptionKeys(null));

describe('re-seal', () => {
  it('moves every value of an older key to the current one through the store, after which the older key can go', async () => {
    ring('k1', 'k1');
    await checkEncryptionKeys(db.pool);
    const runId = await insertRunRows(db.pool, { tenantId: 't-reseal', status: 'Running', finishedAt: null });
    await db.pool.query(`UPDATE runs SET input = $2::jsonb WHERE id = $1`, [runId, sealJsonText('{"secret":"in"}', runDocAt(runId, 'input'))]);
    await appendAgentStep(db.pool, runId, 'agent', { step: 1, generation: 1, attempt: 1, kind: 'tool', payload: { content: 'step' } });
    await createMcpServer(db.pool, 't-reseal', { name: 'pay', url: 'https://mcp.example/x', transport: 'streamable-http', headers: { authorization: 'Bearer s' }, allowedTools: null, timeoutMs: 1000 });
    expect(await recordNodeIntent(db.pool, 't-reseal', runId, 'start', 'skip', '{"output":{"a":1}}')).not.toBeNull();

    ring('k2', 'k1', 'k2');
    // a process without k1 may not boot while values still use it
    await checkEncryptionKeys(db.pool);
    expect(await olderKeysInUse(db.pool)).toBe(true);
    const stale = await staleValueCount(db.pool);
    expect(stale).toBeGreaterThanOrEqual(4);
    const pass = await resealPass(db.pool, { batch: 2 });
    expect(pass).toMatchObject({ ran: true, unreadable: 0 });
    expect(pass.resealed).toBe(stale);
    expect(await staleValueCount(db.pool)).toBe(0);
    expect(await olderKeysInUse(db.pool)).toBe(false);

    ring('k2', 'k2');
    await checkEncryptionKeys(db.pool);
    const input = await db.pool.query<{ input: unknown }>('SELECT input FROM runs WHERE id = $1', [runId]);
    expect(openJson(input.rows[0]!.input, runDocAt(runId, 'input'))).toEqual({ secret: 'in' });
    expect((await loadAgentSteps(db.pool, runId, 'agent'))[0]!.payload).toEqual({ content: 'step' });
    expect((await mcpServerForUse(db.pool, 't-reseal', 'pay'))!.headers).toEqual({ authorization: 'Bearer s' });
    // the intent's digest was recomputed under k2: the same request is still a duplicate
    expect(await recordNodeIntent(db.pool, 't-reseal', runId, 'start', 'skip', '{"output":{"a":1}}')).toBe('duplicate');
  });

  it('refuses to boot without a key values may still use, naming it', async () => {
    await db.pool.query('DELETE FROM encryption_keys');
    ring('k1', 'k1');
    await checkEncryptionKeys(db.pool);
    await db.pool.query(`UPDATE encryption_keys SET retired_at = NULL WHERE id = 'k1'`);
    ring('k2', 'k2');
    await expect(checkEncryptionKeys(db.pool)).rejects.toThrow(EncryptionKeyMissingError);
    await expect(checkEncryptionKeys(db.pool)).rejects.toThrow("'k1'");
  });

  it('names every sealed column once', () => {
    const names = SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`);
    expect(new Set(names).size).toBe(names.length);
  });
});
