-- The dispatcher's snapshot load (loadSnapshots, libs/db/src/store/run-snapshots.ts) as a function
-- that always runs a generic plan, cached per session. As a prepared statement it was planned
-- afresh on every call: Postgres kept choosing custom plans for it, and planning this query took
-- 4-6 ms (11 ms in a new session) against 0.3-0.7 ms to run it, once per tick that reads a run it
-- has not cached (every new run, every run an API intent or a sweep woke). Its parameters are the
-- run ids, the slot-holding statuses, MAX_CONCURRENT_RUNS and the terminal run statuses (passed
-- in, so the model's sets are not restated here — except the live-children filter, which names the
-- terminal statuses so its partial index applies); none of them selects an index, so the generic
-- plan is the plan.
-- A Scheduled run is judged like a Pending one (its tenant's live count, the Pending runs ahead of
-- it): the tick that releases it at its notBefore admits it in the same commit when a slot is free.
-- Output: one row per existing run of run_ids, oldest first (created_at, id); its unconsumed signals,
-- its unsettled waitpoints and the events its event waitpoints may take (Wait nodes) ride along.
CREATE OR REPLACE FUNCTION flowline_load_snapshots(run_ids uuid[], slot_statuses text[], max_runs int, terminal_statuses text[])
RETURNS TABLE (run json, graph jsonb, def_id uuid, def_version int, wake_at bigint, shard int, trace_parent text,
               concurrency_key text, concurrency_claimed boolean, tenant_live bigint, ahead int,
               nodes json, intents json, children json, signals json, waitpoints json, wait_events json)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH target AS (
    SELECT id, tenant_id, status, failure_class, reason, paused, version, last_seq, input, total_attempts, breakpoints,
           step_allowance, edge_overrides, cancel_reason, created_at, not_before, started_at, finished_at, parent_run_id, depth,
           plan_graph, wake_at, shard, definition_id, definition_version, trace_parent, budget, usage, priority,
           concurrency_key, concurrency_claimed
    FROM runs WHERE id = ANY(run_ids)),
  live AS MATERIALIZED (
    SELECT t.tenant_id, l.n,
           (SELECT count(*) FROM (SELECT 1 FROM runs p
              WHERE p.tenant_id = t.tenant_id AND p.status = 'Pending' AND p.parent_run_id IS NULL
              LIMIT greatest(max_runs - l.n, 0) + 1) q) AS pending
    FROM (SELECT DISTINCT tenant_id FROM target WHERE status IN ('Pending', 'Scheduled') AND parent_run_id IS NULL) t
    CROSS JOIN LATERAL (SELECT count(*) AS n FROM runs l
      WHERE l.tenant_id = t.tenant_id AND l.status = ANY(slot_statuses) AND l.parent_run_id IS NULL) l)
  SELECT
    json_build_object(
      'id', r.id, 'tenantId', r.tenant_id, 'status', r.status, 'failureClass', r.failure_class,
      'reason', r.reason, 'paused', r.paused, 'version', r.version, 'lastSeq', r.last_seq, 'input', r.input,
      'totalAttempts', r.total_attempts, 'breakpoints', r.breakpoints, 'stepAllowance', r.step_allowance,
      'edgeOverrides', r.edge_overrides, 'cancelReason', r.cancel_reason, 'createdAt', flowline_ms(r.created_at),
      'notBefore', flowline_ms(r.not_before),
      'startedAt', flowline_ms(r.started_at), 'finishedAt', flowline_ms(r.finished_at),
      'parentRunId', r.parent_run_id, 'depth', r.depth, 'budget', r.budget, 'usage', r.usage, 'priority', r.priority) AS run,
    r.plan_graph AS graph,
    r.definition_id AS def_id,
    r.definition_version AS def_version,
    flowline_ms(r.wake_at) AS wake_at,
    r.shard,
    r.trace_parent,
    r.concurrency_key,
    r.concurrency_claimed,
    live.n AS tenant_live,
    (CASE WHEN r.status IN ('Pending', 'Scheduled') AND r.parent_run_id IS NULL AND max_runs > live.n AND live.pending > max_runs - live.n THEN
       (SELECT count(*) FROM (SELECT 1 FROM runs x
          WHERE x.tenant_id = r.tenant_id AND x.status = 'Pending' AND x.parent_run_id IS NULL AND x.priority > r.priority
          LIMIT max_runs - live.n) hi)
       + (SELECT count(*) FROM (SELECT 1 FROM runs x
          WHERE x.tenant_id = r.tenant_id AND x.status = 'Pending' AND x.parent_run_id IS NULL AND x.priority = r.priority
            AND (x.created_at, x.id) < (r.created_at, r.id)
          LIMIT max_runs - live.n) eq)
     ELSE 0 END)::int AS ahead,
    (SELECT coalesce(json_agg(json_build_object(
       'nodeKey', n.node_key, 'kind', n.kind, 'status', n.status, 'attempt', n.attempt,
       'attemptLimit', n.attempt_limit, 'invocationId', n.invocation_id, 'failureClass', n.failure_class,
       'cause', n.cause, 'reason', n.reason, 'input', n.input, 'inputOverride', n.input_override, 'output', n.output,
       'notBefore', flowline_ms(n.not_before), 'deadlineAt', flowline_ms(n.deadline_at),
       'queuedAt', flowline_ms(n.queued_at), 'startedAt', flowline_ms(n.started_at),
       'finishedAt', flowline_ms(n.finished_at), 'steering', n.steering,
       'pendingDecisionKind', n.pending_decision_kind, 'decision', n.decision, 'approvals', n.approvals, 'held', n.held,
       'childRunId', n.child_run_id, 'loop', n.loop_state, 'map', n.map_state)), '[]'::json)
     FROM node_runs n WHERE n.run_id = r.id) AS nodes,
    (SELECT coalesce(json_agg(json_build_object('id', i.id, 'kind', i.kind, 'nodeKey', i.node_key,
       'payload', i.payload) ORDER BY i.created_at, i.id), '[]'::json)
     FROM intents i WHERE i.run_id = r.id AND i.applied_at IS NULL) AS intents,
    (SELECT coalesce(json_agg(json_build_object('childRunId', c.id, 'nodeKey', c.parent_node_key,
       'status', c.status, 'output', c.output, 'failureClass', c.failure_class, 'reason', c.reason,
       'usage', c.usage, 'totalAttempts', c.total_attempts)
       ORDER BY c.created_at, c.id), '[]'::json)
     FROM runs c
     WHERE c.parent_run_id = r.id
       AND c.id IN (
         -- the live children, through the partial index runs_parent_live_idx: its predicate is
         -- spelled out here (not the terminal_statuses parameter) so the generic plan can use it,
         -- and a Map's thousands of ended children are never read
         SELECT l.id FROM runs l
         WHERE l.parent_run_id = r.id AND l.status NOT IN ('Completed', 'Failed', 'Cancelled')
         UNION
         SELECT n.child_run_id FROM node_runs n WHERE n.run_id = r.id AND n.child_run_id IS NOT NULL
         UNION
         -- a Map's children it still counts as working, ended ones included (not yet gathered)
         SELECT unnest(n.live_children) FROM node_runs n WHERE n.run_id = r.id AND n.live_children IS NOT NULL)
    ) AS children,
    -- the signals no Wait consumed yet, oldest first (the partial index run_signals_unconsumed_idx)
    (SELECT coalesce(json_agg(json_build_object('id', s.id, 'channel', s.channel, 'payload', s.payload,
       'at', flowline_ms(s.created_at)) ORDER BY s.created_at, s.id), '[]'::json)
     FROM run_signals s WHERE s.run_id = r.id AND s.consumed_at IS NULL) AS signals,
    -- the waitpoints of parked Waits not settled yet (token and event arms)
    (SELECT coalesce(json_agg(json_build_object('id', w.id, 'nodeKey', w.node_key, 'index', w.arm_index, 'kind', w.kind,
       'status', w.status, 'payload', w.payload, 'completedAt', flowline_ms(w.completed_at), 'expiresAt', flowline_ms(w.expires_at),
       'eventName', w.event_name, 'createdAt', flowline_ms(w.created_at)) ORDER BY w.created_at, w.id), '[]'::json)
     FROM waitpoints w WHERE w.run_id = r.id AND w.consumed_at IS NULL) AS waitpoints,
    -- per waiting event arm, the oldest 100 events of its name received since it began (its filter
    -- is judged by the planner; an arm whose first 100 events all fail its filter waits on)
    (SELECT coalesce(json_agg(json_build_object('id', e.id, 'name', e.name, 'data', e.data, 'at', flowline_ms(e.received_at))
       ORDER BY e.received_at, e.id), '[]'::json)
     FROM (SELECT DISTINCT ON (ev.id) ev.* FROM waitpoints w
           CROSS JOIN LATERAL (SELECT * FROM inbound_events x
             WHERE x.tenant_id = w.tenant_id AND x.name = w.event_name AND x.received_at >= w.created_at
             ORDER BY x.received_at, x.id LIMIT 100) ev
           WHERE w.run_id = r.id AND w.kind = 'event' AND w.consumed_at IS NULL) e) AS wait_events
  FROM target r LEFT JOIN live USING (tenant_id)
  ORDER BY r.created_at, r.id;
END
$$;
