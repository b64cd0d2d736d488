/**
 * Run-state reads: a run's state log (`run_state_writes`, one row per `state.updated` event,
 * seq 0 a fork's seed), opened and flattened into the entries the pure fold reads
 * (libs/graph `foldState`). Writes happen in `flowline_apply_run` with the tick's commit.
 */
import { foldState, type Graph, type JsonObject, type StateWrite } from '@flowline/graph';
import { openJson, openJsonText, sealJson, type Sealed } from '../crypto';
import { definitionGraphAt, exactJson } from './definitions';
import { encodeJson } from '../json-codec';
import type { Queryable } from './transaction';

/** Where a run-state log row's entries live. */
export function stateEntriesAt(runId: string, seq: number): Sealed {
  return { table: 'run_state_writes', column: 'entries', row: `${runId}/${seq}` };
}

interface LogRow {
  run_id: string;
  seq: number;
  entries: unknown;
}

type Entries = Array<{ nodeKey: string | null; writes: JsonObject }>;

/** The state logs of `runIds` (oldest entry first), by run id; a run without entries is absent. */
export async function loadStateLogs(db: Queryable, runIds: readonly string[]): Promise<Map<string, StateWrite[]>> {
  const out = new Map<string, StateWrite[]>();
  if (runIds.length === 0) return out;
  const res = await db.query<LogRow>({
    name: 'flowline_load_state_logs',
    text: 'SELECT run_id, seq, entries FROM run_state_writes WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq',
    values: [runIds],
  });
  for (const row of res.rows) {
    let log = out.get(row.run_id);
    if (!log) out.set(row.run_id, (log = []));
    for (const e of openJson<Entries>(row.entries, stateEntriesAt(row.run_id, row.seq))) log.push({ seq: row.seq, nodeKey: e.nodeKey, writes: e.writes });
  }
  return out;
}

/** One run's state log, with entries committed at or before `atSeq` only when given. */
export async function loadStateLog(db: Queryable, runId: string, atSeq?: number): Promise<StateWrite[]> {
  const log = (await loadStateLogs(db, [runId])).get(runId) ?? [];
  return atSeq === undefined ? log : log.filter((w) => w.seq <= atSeq);
}

/** Copies `entries` as a run's seed (seq 0), sealed for the new run. */
export async function insertStateSeed(db: Queryable, runId: string, tenantId: string, entries: Entries): Promise<void> {
  if (entries.length === 0) return;
  await db.query('INSERT INTO run_state_writes (run_id, seq, tenant_id, entries) VALUES ($1, 0, $2, $3::jsonb)', [
    runId,
    tenantId,
    encodeJson(sealJson(entries, stateEntriesAt(runId, 0))),
  ]);
}

interface RunStateHead {
  definition_id: string;
  definition_version: number;
  plan_graph: string;
  last_seq: number;
}

/**
 * The tenant's run state as of event `atSeq` (default: its last event), with that seq; null
 * when the run is absent. `seq` past the run's last event is answered as of the last one
 * (`atSeq` is clamped) — the caller refuses it first when it must. A run whose graph keeps
 * no state answers `{}`. The log rows after the run's last_seq read here (a commit landing
 * between the two reads) are left out, so the answer is one consistent state.
 */
export async function getRunState(db: Queryable, tenantId: string, runId: string, atSeq?: number): Promise<{ state: JsonObject; seq: number } | null> {
  const res = await db.query<RunStateHead>(
    'SELECT definition_id, definition_version, plan_graph::text AS plan_graph, last_seq FROM runs WHERE id = $1 AND tenant_id = $2',
    [runId, tenantId],
  );
  const r = res.rows[0];
  if (!r) return null;
  const seq = Math.min(atSeq ?? r.last_seq, r.last_seq);
  const graph = exactJson(openJsonText(r.plan_graph, definitionGraphAt(r.definition_id, r.definition_version, 'plan_graph'))) as Graph | null;
  if (!graph?.state) return { state: {}, seq };
  return { state: foldState(graph.state, await loadStateLog(db, runId, seq)), seq };
}
