/**
 * Re-sealing stored values with the current encryption key, and the boot check that keeps a
 * key configured while values still need it (see ./crypto.ts for the key ring).
 *
 * {@link SEALED_COLUMNS} names every column a value is sealed into and how its row names the
 * value (the AAD that ties a sealed value to its place). A pass walks each column in key
 * order, a batch at a time: it selects the values sealed with another key than the current
 * one, opens each, seals it again, and writes it back only if the stored value is still the one
 * it read (compare-and-set: a dispatcher that rewrote the row meanwhile wins, and its value is
 * already sealed with the current key). Nothing is remembered between passes: a pass stopped by
 * a crash is resumed by the next one, which selects only what is still left. Passes of several
 * replicas are kept apart by an advisory lock, so one replica re-seals at a time.
 *
 * A pass that finds nothing left marks every key but the current one retired in
 * `encryption_keys`; from then on a process may boot without them.
 */
import { EncryptedValueError, configuredKeyIds, currentKeyId, DEFAULT_KEY_ID, digestsOf, isSealedValue, resealEnvelope, type Envelope, type Sealed } from './crypto';
import type { Queryable } from './store/transaction';
import type { Pool } from './pool';
import { agentStepAt } from './store/agent-steps';
import { definitionGraphAt } from './store/definitions';
import { eventDetailAt } from './store/run-apply';
import { inboundEventDataAt, NODE_DOC_COLUMNS, nodeDocAt, runDocAt, steerMessageAt, waitpointPayloadAt } from './store/run-snapshots';
import { stateEntriesAt } from './store/run-state';

/** How a column holds its sealed values. */
type Shape =
  /** a jsonb envelope, possibly with clear members beside it (plan_graph's `nodes`, an intent's `dg`) */
  | 'jsonb'
  /** the envelope's JSON text in a text column */
  | 'text'
  /** a jsonb array of `{operationId, message}` whose every `message` is an envelope (node_runs.steering) */
  | 'steering';

/** One column values are sealed into. */
export interface SealedColumn {
  table: string;
  column: string;
  shape: Shape;
  /** the primary key's columns, in order */
  key: readonly string[];
  /** other columns the AAD is made of (read with the key) */
  using?: readonly string[];
  /** where the value of a row lives (its AAD), from the row's key (and `using`) values as text */
  at: (k: Readonly<Record<string, string>>) => Sealed;
}

const messageAt = (id: string, column: string): Sealed => ({ table: 'messages', column, row: id });

/** Every column a value is sealed into: a column sealed by a store function and missing here is never re-sealed. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  ...(['input', 'output'] as const).map((c) => ({ table: 'runs', column: c, shape: 'jsonb' as const, key: ['id'], at: (k: Readonly<Record<string, string>>) => runDocAt(k.id!, c) })),
  // a run's pinned graphs are sealed where their definition version's were
  ...(['graph', 'plan_graph'] as const).map((c) => ({
    table: 'runs',
    column: c,
    shape: 'jsonb' as const,
    key: ['id'],
    using: ['definition_id', 'definition_version'],
    at: (k: Readonly<Record<string, string>>) => definitionGraphAt(k.definition_id!, Number(k.definition_version), c),
  })),
  ...NODE_DOC_COLUMNS.map(([, c]) => ({
    table: 'node_runs',
    column: c,
    shape: 'jsonb' as const,
    key: ['run_id', 'node_key'],
    at: (k: Readonly<Record<string, string>>) => nodeDocAt(k.run_id!, k.node_key!, c),
  })),
  { table: 'node_runs', column: 'steering', shape: 'steering', key: ['run_id', 'node_key'], at: (k) => nodeDocAt(k.run_id!, k.node_key!, 'steering') },
  { table: 'events', column: 'detail', shape: 'jsonb', key: ['run_id', 'seq'], at: (k) => eventDetailAt(k.run_id!, Number(k.seq)) },
  { table: 'intents', column: 'payload', shape: 'jsonb', key: ['id'], at: (k) => ({ table: 'intents', column: 'payload', row: k.id! }) },
  { table: 'run_signals', column: 'payload', shape: 'jsonb', key: ['id'], at: (k) => ({ table: 'run_signals', column: 'payload', row: k.id! }) },
  { table: 'run_state_writes', column: 'entries', shape: 'jsonb', key: ['run_id', 'seq'], at: (k) => stateEntriesAt(k.run_id!, Number(k.seq)) },
  { table: 'waitpoints', column: 'payload', shape: 'jsonb', key: ['id'], at: (k) => waitpointPayloadAt(k.id!) },
  { table: 'inbound_events', column: 'data', shape: 'jsonb', key: ['tenant_id', 'id'], at: (k) => inboundEventDataAt(k.tenant_id!, k.id!) },
  { table: 'agent_steps', column: 'payload', shape: 'jsonb', key: ['run_id', 'node_key', 'step'], at: (k) => agentStepAt(k.run_id!, k.node_key!, Number(k.step)) },
  { table: 'messages', column: 'text', shape: 'text', key: ['id'], at: (k) => messageAt(k.id!, 'text') },
  { table: 'messages', column: 'attachments', shape: 'jsonb', key: ['id'], at: (k) => messageAt(k.id!, 'attachments') },
  { table: 'definitions', column: 'graph', shape: 'jsonb', key: ['id', 'version'], at: (k) => definitionGraphAt(k.id!, Number(k.version)) },
  { table: 'definitions', column: 'plan_graph', shape: 'jsonb', key: ['id', 'version'], at: (k) => definitionGraphAt(k.id!, Number(k.version), 'plan_graph') },
  // a version's graph is sealed where the definition's was (the AAD names the definition)
  { table: 'definition_versions', column: 'graph', shape: 'jsonb', key: ['definition_id', 'version'], at: (k) => definitionGraphAt(k.definition_id!, Number(k.version)) },
  { table: 'definition_versions', column: 'plan_graph', shape: 'jsonb', key: ['definition_id', 'version'], at: (k) => definitionGraphAt(k.definition_id!, Number(k.version), 'plan_graph') },
  ...(['pinned_graph', 'pinned_plan_graph'] as const).map((c) => ({
    table: 'schedules',
    column: c,
    shape: 'jsonb' as const,
    key: ['id'],
    using: ['definition_id', 'definition_version'],
    at: (k: Readonly<Record<string, string>>) => definitionGraphAt(k.definition_id!, Number(k.definition_version), c === 'pinned_graph' ? 'graph' : 'plan_graph'),
  })),
  { table: 'mcp_servers', column: 'headers', shape: 'jsonb', key: ['id'], at: (k) => ({ table: 'mcp_servers', column: 'headers', row: k.id! }) },
  {
    table: 'saved_agent_versions',
    column: 'members',
    shape: 'jsonb',
    key: ['agent_id', 'version'],
    at: (k) => ({ table: 'saved_agent_versions', column: 'members', row: `${k.agent_id}/${k.version}` }),
  },
  { table: 'webhooks', column: 'secrets', shape: 'jsonb', key: ['id'], at: (k) => ({ table: 'webhooks', column: 'secrets', row: k.id! }) },
  { table: 'webhook_deliveries', column: 'body', shape: 'jsonb', key: ['id'], at: (k) => ({ table: 'webhook_deliveries', column: 'body', row: k.id! }) },
];

/** The advisory lock that keeps re-seal passes of several replicas apart. */
const RESEAL_LOCK = 'flowline:reseal';

/**
 * The SQL predicate (over `t`) "holds a value sealed with a key whose id is `op` `$1`" (`<>`:
 * another key than `$1`, what a pass re-seals). The id sits in the envelope's `kid`; an envelope
 * without one is {@link DEFAULT_KEY_ID}'s.
 */
function sealedWhere(c: SealedColumn, op: '<>' | '=' = '<>'): string {
  const col = `t.${c.column}`;
  const sealed = (v: string) => `(${v} ? '$enc' AND coalesce(${v}->>'kid', '${DEFAULT_KEY_ID}') ${op} $1)`;
  switch (c.shape) {
    case 'jsonb':
      return `jsonb_typeof(${col}) = 'object' AND ${sealed(col)}`;
    case 'steering':
      return `jsonb_typeof(${col}) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements(${col}) s WHERE jsonb_typeof(s->'message') = 'object' AND ${sealed("s->'message'")})`;
    case 'text':
      // JSON.stringify of an envelope begins `{"$enc":"v1",`, then `"kid":"<id>",` unless it is the default key's
      return (
        `${col} LIKE '{"$enc":"v1",%' AND ` +
        `(CASE WHEN ${col} LIKE '{"$enc":"v1","kid":"%' THEN split_part(substr(${col}, 21), '"', 1) ELSE '${DEFAULT_KEY_ID}' END) ${op} $1`
      );
  }
}

interface Candidate {
  /** the row's physical address as read: the write-back finds the row by it (no cast of its key) */
  ctid: string;
  key: Record<string, string>;
  /** the stored value as text */
  stored: string;
  /** intents only: the intent's kind (its digest covers it) */
  kind?: string;
}

/** Up to `limit` rows of `c` after `after` (key values) holding a stale value, in key order. */
async function candidates(db: Queryable, c: SealedColumn, current: string, after: string[] | null, limit: number): Promise<Candidate[]> {
  const keyList = c.key.map((k) => `t.${k}`).join(', ');
  const keyText = [...c.key, ...(c.using ?? [])].map((k) => `t.${k}::text AS "k_${k}"`).join(', ');
  const cursor = after === null ? '' : `AND (${keyList}) > (${c.key.map((_, i) => `$${i + 3}`).join(', ')})`;
  const res = await db.query<Record<string, string>>(
    `SELECT t.ctid::text AS ctid, ${keyText}, t.${c.column}::text AS stored${c.table === 'intents' ? ', t.kind' : ''}
       FROM ${c.table} t WHERE ${sealedWhere(c)} ${cursor}
      ORDER BY ${keyList} LIMIT $2`,
    [current, limit, ...(after ?? [])],
  );
  return res.rows.map((r) => ({
    ctid: r.ctid!,
    key: Object.fromEntries([...c.key, ...(c.using ?? [])].map((k) => [k, r[`k_${k}`]!])),
    stored: r.stored!,
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
  }));
}

/** An envelope's members beside the sealed ones (clear structure riding with it). */
function splitEnvelope(v: Record<string, unknown>): { envelope: Envelope; extra: Record<string, unknown> } {
  const { $enc, kid, iv, ct, tag, ...extra } = v;
  const envelope = { $enc, ...(kid === undefined ? {} : { kid }), iv, ct, tag } as Envelope;
  return { envelope, extra };
}

/** The re-sealed stored text of a candidate, or null when nothing of it is stale any more. */
function resealed(c: SealedColumn, cand: Candidate): string | null {
  const where = c.at(cand.key);
  if (c.shape === 'text') {
    const next = resealEnvelope(JSON.parse(cand.stored) as Envelope, where);
    return next === null ? null : JSON.stringify(next.envelope);
  }
  const value = JSON.parse(cand.stored) as unknown;
  if (c.shape === 'steering') {
    let changed = false;
    const items = (value as Array<{ operationId: string; message: unknown }>).map((s) => {
      if (!isSealedValue(s.message)) return s;
      const next = resealEnvelope(s.message, steerMessageAt(cand.key.run_id!, cand.key.node_key!, s.operationId));
      if (next === null) return s;
      changed = true;
      return { ...s, message: next.envelope };
    });
    return changed ? JSON.stringify(items) : null;
  }
  const { envelope, extra } = splitEnvelope(value as Record<string, unknown>);
  const next = resealEnvelope(envelope, where);
  if (next === null) return null;
  // an intent's digest is recomputed under the current key, so the old key can go
  if (c.table === 'intents' && 'dg' in extra && cand.kind !== undefined) extra.dg = digestsOf(`${cand.kind}\n${next.plaintext}`)[0];
  return JSON.stringify({ ...extra, ...next.envelope });
}

/** What one re-seal pass did. */
export interface ResealPass {
  /** false when another replica held the re-seal lock (nothing was done) */
  ran: boolean;
  /** values written sealed with the current key */
  resealed: number;
  /** values that could not be opened (named in `errors`, left as they are) */
  unreadable: number;
  /** values a concurrent writer changed first (already current, or picked up next pass) */
  raced: number;
  errors: EncryptedValueError[];
}

/** Options of {@link resealPass}. */
export interface ResealOptions {
  /** rows read and written per transaction */
  batch: number;
  /** told after each batch: the values re-sealed so far in this pass */
  onProgress?: (resealedSoFar: number) => void;
  /** asked between batches: true ends the pass early (shutdown) */
  stopping?: () => boolean;
}

/**
 * One pass over every sealed column, re-sealing each value sealed with another key than the
 * current one. A no-op without encryption. When the pass leaves nothing stale, every key but the
 * current one is marked retired.
 */
export async function resealPass(pool: Pool, options: ResealOptions): Promise<ResealPass> {
  const current = currentKeyId();
  const out: ResealPass = { ran: false, resealed: 0, unreadable: 0, raced: 0, errors: [] };
  if (current === null) return out;
  const client = await pool.connect();
  try {
    const [lock] = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [RESEAL_LOCK])).rows;
    if (!lock?.ok) return out;
    out.ran = true;
    try {
      for (const c of SEALED_COLUMNS) {
        let after: string[] | null = null;
        for (;;) {
          if (options.stopping?.()) return out;
          const batch = await candidates(client, c, current, after, options.batch);
          if (batch.length === 0) break;
          after = c.key.map((k) => batch[batch.length - 1]!.key[k]!);
          await resealBatch(client, c, batch, out);
          options.onProgress?.(out.resealed);
          if (batch.length < options.batch) break;
        }
      }
      if (out.unreadable === 0 && (await staleValueCount(client, current)) === 0) {
        await client.query(`UPDATE encryption_keys SET retired_at = now() WHERE id <> $1 AND retired_at IS NULL`, [current]);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [RESEAL_LOCK]);
    }
  } finally {
    client.release();
  }
  return out;
}

/** Writes one batch back, each value only if it is still the one read. */
async function resealBatch(client: Queryable, c: SealedColumn, batch: Candidate[], out: ResealPass): Promise<void> {
  const rows: Array<{ ctid: string; old: string; next: string }> = [];
  for (const cand of batch) {
    try {
      const next = resealed(c, cand);
      if (next !== null) rows.push({ ctid: cand.ctid, old: cand.stored, next });
    } catch (e) {
      if (!(e instanceof EncryptedValueError)) throw e;
      out.unreadable++;
      if (out.errors.length < 20) out.errors.push(e);
    }
  }
  if (rows.length === 0) return;
  const cast = c.shape === 'text' ? 'text' : 'jsonb';
  // One statement, so one transaction. A row rewritten since it was read has moved (another
  // ctid) and no longer holds `old`: it is left to the writer, whose value is already current.
  const res = await client.query(
    `UPDATE ${c.table} t SET ${c.column} = v.next::${cast}
       FROM jsonb_to_recordset($1::jsonb) AS v(ctid text, old text, next text)
      WHERE t.ctid = ANY($2::tid[]) AND t.ctid = v.ctid::tid AND t.${c.column}::text = v.old`,
    [JSON.stringify(rows), rows.map((r) => r.ctid)],
  );
  out.resealed += res.rowCount ?? 0;
  out.raced += rows.length - (res.rowCount ?? 0);
}

/** How many stored values are sealed with another key than `current` (all when `current` is null: none are current). */
export async function staleValueCount(db: Queryable, current: string | null = currentKeyId()): Promise<number> {
  if (current === null) return 0;
  const parts = SEALED_COLUMNS.map((c) => `(SELECT count(*) FROM ${c.table} t WHERE ${sealedWhere(c)})`);
  const res = await db.query<{ n: string }>(`SELECT (${parts.join(' + ')})::text AS n`, [current]);
  return Number(res.rows[0]!.n);
}

/** Raised at boot when the configuration lacks a key stored values may still use. */
export class EncryptionKeyMissingError extends Error {
  readonly code = 'EncryptionKeyMissing';
  constructor(readonly missing: string[]) {
    super(
      `stored values may still be sealed with encryption key${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')}, ` +
        'which ENCRYPTION_KEYS no longer holds: keep it until the re-seal reports no rows left (flowline_reseal_rows_left 0)',
    );
    this.name = 'EncryptionKeyMissingError';
  }
}

/**
 * The boot check of a process with a pool: registers the current key, and throws
 * {@link EncryptionKeyMissingError} when a key values may still use (not retired) is not
 * configured. On a store that never registered a key (upgraded from a release without the
 * registry), values already sealed with the single key are found first and that key registered.
 */
export async function checkEncryptionKeys(db: Queryable): Promise<void> {
  const current = currentKeyId();
  const known = await db.query<{ id: string; retired: boolean }>('SELECT id, retired_at IS NOT NULL AS retired FROM encryption_keys');
  if (known.rows.length === 0 && (await hasValueSealedWith(db, DEFAULT_KEY_ID))) {
    await db.query('INSERT INTO encryption_keys (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [DEFAULT_KEY_ID]);
    known.rows.push({ id: DEFAULT_KEY_ID, retired: false });
  }
  const configured = new Set(configuredKeyIds());
  const missing = known.rows.filter((r) => !r.retired && !configured.has(r.id)).map((r) => r.id);
  if (missing.length > 0) throw new EncryptionKeyMissingError(missing.sort());
  // a key sealing new values again is in use again
  if (current !== null) await db.query('INSERT INTO encryption_keys (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET retired_at = NULL', [current]);
}

/** True when any stored value is sealed with `kid` (a probe, one row per column at most). */
async function hasValueSealedWith(db: Queryable, kid: string): Promise<boolean> {
  for (const c of SEALED_COLUMNS) {
    const res = await db.query(`SELECT 1 FROM ${c.table} t WHERE ${sealedWhere(c, '=')} LIMIT 1`, [kid]);
    if (res.rows.length > 0) return true;
  }
  return false;
}

/** True when some key other than the current one may still seal stored values (a re-seal has work). */
export async function olderKeysInUse(db: Queryable, current: string | null = currentKeyId()): Promise<boolean> {
  if (current === null) return false;
  const res = await db.query('SELECT 1 FROM encryption_keys WHERE id <> $1 AND retired_at IS NULL LIMIT 1', [current]);
  return res.rows.length > 0;
}
