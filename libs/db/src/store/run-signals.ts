/** Signals sent to a run and kept until a Wait node consumes them (`schema/run-signals.ts`). */
import { randomUUID } from 'node:crypto';
import { TERMINAL_RUN_STATUSES, type Graph } from '@flowline/graph';
import { isEnvelope, openEnvelopeText, sealJsonText } from '../crypto';
import { decodeJson } from '../json-codec';
import { definitionGraphAt } from './definitions';
import type { Queryable } from './transaction';

/** What a send did. */
export type SendSignalOutcome =
  | { kind: 'sent'; signalId: string; duplicate: boolean }
  | { kind: 'runNotFound' }
  | { kind: 'runTerminal'; status: string }
  | { kind: 'backlogFull'; pending: number };

export interface SendSignalInput {
  tenantId: string;
  runId: string;
  channel: string;
  /** the payload as JSON text (judged against the channel's schema by the caller) */
  payloadJson: string;
  requestId: string;
  /** MAX_PENDING_SIGNALS_PER_CHANNEL: most unconsumed signals one channel of one run keeps */
  maxPending: number;
}

/*
 * Inputs: $1 new id, $2 run id, $3 tenant, $4 channel, $5 payload, $6 request id, $7 bound,
 * $8 terminal statuses.
 * Guard: the run exists for the tenant (locked FOR SHARE so a concurrent end is ordered with the
 * send), is not terminal, and its channel holds fewer than $7 unconsumed signals; a request id
 * already sent answers the earlier signal (idempotent) whatever else changed.
 * Effect: the signal row, and the run due now with its version bumped (a foreign change: a
 * dispatcher's cached snapshot of the run, which lacks the signal, is dropped, and a tick planned
 * from it cannot commit).
 * Result: one row: the outcome, the signal id, the run's status, the pending count.
 */
const SEND_SQL = `
WITH r AS (SELECT id, status FROM runs WHERE id = $2::uuid AND tenant_id = $3 FOR SHARE),
prior AS (SELECT s.id FROM run_signals s WHERE s.run_id = $2::uuid AND s.request_id = $6),
pending AS (SELECT count(*)::int AS n FROM run_signals s WHERE s.run_id = $2::uuid AND s.channel = $4 AND s.consumed_at IS NULL),
verdict AS (
  SELECT CASE
    WHEN NOT EXISTS (SELECT 1 FROM r) THEN 'runNotFound'
    WHEN EXISTS (SELECT 1 FROM prior) THEN 'duplicate'
    WHEN (SELECT status FROM r) = ANY($8::text[]) THEN 'runTerminal'
    WHEN (SELECT n FROM pending) >= $7 THEN 'backlogFull'
    ELSE 'sent' END AS v),
ins AS (
  INSERT INTO run_signals (id, run_id, tenant_id, channel, payload, request_id)
  SELECT $1::uuid, $2::uuid, $3, $4, $5::jsonb, $6 FROM verdict WHERE v = 'sent'
  ON CONFLICT (run_id, request_id) DO NOTHING
  RETURNING id),
woke AS (
  UPDATE runs SET wake_at = now(), version = version + 1
  WHERE id = $2::uuid AND EXISTS (SELECT 1 FROM ins) RETURNING id)
SELECT (SELECT v FROM verdict) AS verdict, coalesce((SELECT id FROM ins), (SELECT id FROM prior)) AS signal_id,
       (SELECT status FROM r) AS status, (SELECT n FROM pending) AS pending, (SELECT count(*) FROM woke)::int AS woke`;

/**
 * Sends a signal to a run: kept until a Wait on its channel consumes it, the run woken at once.
 * The same `requestId` again answers the first signal (`duplicate: true`), never a second row.
 * When two sends of one new request id race, the loser's insert does nothing and it reads the
 * winner's row on its second try.
 */
export async function sendSignal(db: Queryable, input: SendSignalInput): Promise<SendSignalOutcome> {
  for (let tries = 0; tries < 2; tries++) {
    const id = randomUUID();
    const payload = sealJsonText(input.payloadJson, { table: 'run_signals', column: 'payload', row: id });
    const res = await db.query<{ verdict: string; signal_id: string | null; status: string | null; pending: number }>({
      name: 'flowline_send_signal',
      text: SEND_SQL,
      values: [id, input.runId, input.tenantId, input.channel, payload, input.requestId, input.maxPending, [...TERMINAL_RUN_STATUSES]],
    });
    const row = res.rows[0]!;
    if (row.verdict === 'runNotFound') return { kind: 'runNotFound' };
    if (row.verdict === 'runTerminal') return { kind: 'runTerminal', status: row.status! };
    if (row.verdict === 'backlogFull') return { kind: 'backlogFull', pending: row.pending };
    if (row.signal_id !== null) return { kind: 'sent', signalId: row.signal_id, duplicate: row.verdict === 'duplicate' };
    // a concurrent send of the same request id won the unique index: read its row next time
  }
  throw new Error('signal send lost its request-id race twice');
}

/**
 * The signal channels a run accepts (its pinned graph's `signals`; `{}` when it declares none)
 * and its status; null when the tenant has no such run.
 */
export async function getRunSignalChannels(
  db: Queryable,
  tenantId: string,
  runId: string,
): Promise<{ status: string; channels: NonNullable<Graph['signals']> } | null> {
  const res = await db.query<{ status: string; plan_graph: unknown; definition_id: string; definition_version: number }>(
    'SELECT status, plan_graph, definition_id, definition_version FROM runs WHERE id = $1 AND tenant_id = $2',
    [runId, tenantId],
  );
  const r = res.rows[0];
  if (!r) return null;
  const graph = (isEnvelope(r.plan_graph)
    ? decodeJson(openEnvelopeText(r.plan_graph, definitionGraphAt(r.definition_id, r.definition_version, 'plan_graph'))!)
    : r.plan_graph) as Graph;
  return { status: r.status, channels: graph.signals ?? {} };
}
