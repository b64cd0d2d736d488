-- Applies one run's plan (the item of flowline_apply): compare-and-set of the run row on its
-- version, the node patches, events, run-state writes, consumed signals, cancelled and created children, and the run's rolled-up
-- model usage (the `usage` member of the run patch). Returns false when the run moved on (its
-- version differs) or its lock is taken: a lost race, re-read on the next tick, never an error.
-- Like every function here it never waits on a row or advisory lock (try-locks and SKIP LOCKED),
-- so a dispatcher batch can neither block behind nor deadlock with another transaction.
CREATE OR REPLACE FUNCTION flowline_apply_run(item jsonb, shard_count int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  rid uuid := (item->>'runId')::uuid;
  r runs%ROWTYPE;
  rs jsonb := coalesce(item->'run', '{}'::jsonb);
  patches jsonb := coalesce(item->'nodes', '[]'::jsonb);
  evs jsonb := coalesce(item->'events', '[]'::jsonb);
  cancel_ids uuid[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(item->'cancelChildren', '[]'::jsonb))::uuid);
  cross_ids uuid[];
  new_status text;
  n int;
  c jsonb;
  wake_now boolean := false;
  missed_event boolean := false;
BEGIN
  IF NOT pg_try_advisory_xact_lock(flowline_run_lock_key(rid)) THEN
    RETURN false;
  END IF;
  SELECT * INTO r FROM runs WHERE id = rid AND version = (item->>'expectVersion')::int FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN false;
  END IF;

  IF coalesce((item->>'wakeOnly')::boolean, false) THEN
    UPDATE runs SET wake_at = CASE
        WHEN EXISTS (SELECT 1 FROM intents i WHERE i.run_id = rid AND i.applied_at IS NULL) THEN now()
        ELSE (item->>'wakeAt')::timestamptz END
    WHERE id = rid;
    RETURN true;
  END IF;

  IF jsonb_array_length(patches) > 0 THEN
    SELECT count(*) INTO n FROM (
      SELECT 1 FROM node_runs nr
      JOIN jsonb_to_recordset(patches) AS p("nodeKey" text, "expectStatus" text, "expectAttempt" int)
        ON nr.node_key = p."nodeKey"
      WHERE nr.run_id = rid AND nr.status = p."expectStatus" AND nr.attempt = p."expectAttempt"
      FOR UPDATE OF nr SKIP LOCKED) locked;
    IF n <> jsonb_array_length(patches) THEN
      RETURN false;
    END IF;
  END IF;

  new_status := CASE WHEN rs ? 'status' THEN rs->>'status' ELSE r.status END;
  cross_ids := cancel_ids;
  IF r.parent_run_id IS NOT NULL AND new_status IS DISTINCT FROM r.status THEN
    cross_ids := cross_ids || r.parent_run_id;
  END IF;
  IF cardinality(cross_ids) > 0 THEN
    SELECT count(*) INTO n FROM (SELECT 1 FROM runs WHERE id = ANY(cross_ids) FOR UPDATE SKIP LOCKED) locked;
    IF n < (SELECT count(*) FROM runs WHERE id = ANY(cross_ids)) THEN
      RETURN false;
    END IF;
  END IF;

  -- all guards hold and every row is locked: the writes below cannot fail a guard
  IF jsonb_array_length(patches) > 0 THEN
    UPDATE node_runs nr SET
      status = CASE WHEN p."set" ? 'status' THEN p."set"->>'status' ELSE nr.status END,
      attempt = CASE WHEN p."set" ? 'attempt' THEN (p."set"->>'attempt')::int ELSE nr.attempt END,
      attempt_limit = CASE WHEN p."set" ? 'attemptLimit' THEN (p."set"->>'attemptLimit')::int ELSE nr.attempt_limit END,
      invocation_id = CASE WHEN p."set" ? 'invocationId' THEN (p."set"->>'invocationId')::uuid ELSE nr.invocation_id END,
      failure_class = CASE WHEN p."set" ? 'failureClass' THEN p."set"->>'failureClass' ELSE nr.failure_class END,
      cause = CASE WHEN p."set" ? 'cause' THEN (p."set"->>'cause')::node_cause ELSE nr.cause END,
      reason = CASE WHEN p."set" ? 'reason' THEN p."set"->>'reason' ELSE nr.reason END,
      input = CASE WHEN p."set" ? 'input' THEN nullif(p."set"->'input', 'null'::jsonb) ELSE nr.input END,
      input_override = CASE WHEN p."set" ? 'inputOverride' THEN nullif(p."set"->'inputOverride', 'null'::jsonb)
                            ELSE nr.input_override END,
      output = CASE WHEN p."set" ? 'output' THEN nullif(p."set"->'output', 'null'::jsonb) ELSE nr.output END,
      not_before = CASE WHEN p."set" ? 'notBefore' THEN (p."set"->>'notBefore')::timestamptz ELSE nr.not_before END,
      deadline_at = CASE WHEN p."set" ? 'deadlineAt' THEN (p."set"->>'deadlineAt')::timestamptz ELSE nr.deadline_at END,
      queued_at = CASE WHEN p."set" ? 'queuedAt' THEN (p."set"->>'queuedAt')::timestamptz ELSE nr.queued_at END,
      started_at = CASE WHEN p."set" ? 'startedAt' THEN (p."set"->>'startedAt')::timestamptz ELSE nr.started_at END,
      finished_at = CASE WHEN p."set" ? 'finishedAt' THEN (p."set"->>'finishedAt')::timestamptz ELSE nr.finished_at END,
      steering = CASE WHEN p."set" ? 'steering' THEN coalesce(nullif(p."set"->'steering', 'null'::jsonb), '[]'::jsonb)
                      ELSE nr.steering END,
      pending_decision_kind = CASE WHEN p."set" ? 'pendingDecisionKind' THEN p."set"->>'pendingDecisionKind'
                                   ELSE nr.pending_decision_kind END,
      decision = CASE WHEN p."set" ? 'decision' THEN nullif(p."set"->'decision', 'null'::jsonb) ELSE nr.decision END,
      approvals = CASE WHEN p."set" ? 'approvals' THEN nullif(p."set"->'approvals', 'null'::jsonb) ELSE nr.approvals END,
      held = CASE WHEN p."set" ? 'held' THEN (p."set"->>'held')::boolean ELSE nr.held END,
      child_run_id = CASE WHEN p."set" ? 'childRunId' THEN (p."set"->>'childRunId')::uuid ELSE nr.child_run_id END,
      loop_state = CASE WHEN p."set" ? 'loop' THEN nullif(p."set"->'loop', 'null'::jsonb) ELSE nr.loop_state END,
      map_state = CASE WHEN p."set" ? 'map' THEN nullif(p."set"->'map', 'null'::jsonb) ELSE nr.map_state END,
      live_children = CASE WHEN p."set" ? 'liveChildren'
                           THEN ARRAY(SELECT jsonb_array_elements_text(nullif(p."set"->'liveChildren', 'null'::jsonb))::uuid)
                           ELSE nr.live_children END
    FROM jsonb_to_recordset(patches) AS p("nodeKey" text, "set" jsonb)
    WHERE nr.run_id = rid AND nr.node_key = p."nodeKey";
  END IF;

  -- each statement below runs only when its list is non-empty: a hop costs few statements
  IF jsonb_array_length(evs) > 0 THEN
    INSERT INTO events (run_id, seq, kind, node_key, at, detail)
    SELECT rid, r.last_seq + e.ord, e.v->>'kind', e.v->>'nodeKey', now(), coalesce(e.v->'detail', '{}'::jsonb)
    FROM jsonb_array_elements(evs) WITH ORDINALITY AS e(v, ord);
  END IF;

  -- run state: the plan's writes, one log row per state.updated event (numbered by the planner
  -- from the version-guarded last_seq, as the events above are)
  IF jsonb_array_length(coalesce(item->'stateWrites', '[]'::jsonb)) > 0 THEN
    INSERT INTO run_state_writes (run_id, seq, tenant_id, entries)
    SELECT rid, (w->>'seq')::int, r.tenant_id, w->'entries' FROM jsonb_array_elements(item->'stateWrites') AS w;
  END IF;

  IF jsonb_array_length(coalesce(item->'intentIds', '[]'::jsonb)) > 0 THEN
    UPDATE intents SET applied_at = now()
    WHERE run_id = rid AND applied_at IS NULL
      AND id = ANY(ARRAY(SELECT jsonb_array_elements_text(item->'intentIds')::uuid));
  END IF;

  -- signals the plan's Wait nodes consumed: marked with the Wait's success, in this same
  -- version-guarded commit, so a signal is consumed once and never lost between the two
  IF jsonb_array_length(coalesce(item->'consumedSignals', '[]'::jsonb)) > 0 THEN
    UPDATE run_signals s SET consumed_at = now(), consumed_by = c."nodeKey"
    FROM jsonb_to_recordset(item->'consumedSignals') AS c("signalId" uuid, "nodeKey" text)
    WHERE s.run_id = rid AND s.id = c."signalId" AND s.consumed_at IS NULL;
  END IF;

  -- waitpoints: those the plan's parked Waits minted, then those its settled (or ended) Waits
  -- used or withdrew. A landed callback stays `completed` (expired/revoked only over waiting);
  -- the completion route bumps the run's version, so a plan that missed it never gets here.
  IF jsonb_array_length(coalesce(item->'createdWaitpoints', '[]'::jsonb)) > 0 THEN
    INSERT INTO waitpoints (id, tenant_id, run_id, node_key, arm_index, kind, schema, single_use, event_name, created_at, expires_at)
    SELECT w."id", r.tenant_id, rid, w."nodeKey", w."index", w."kind", w."schema", coalesce(w."singleUse", true), w."eventName",
           coalesce(w."createdAt", now()), w."expiresAt"
    FROM jsonb_to_recordset(item->'createdWaitpoints') AS w("id" uuid, "nodeKey" text, "index" int, "kind" text, "schema" jsonb,
         "singleUse" boolean, "eventName" text, "createdAt" timestamptz, "expiresAt" timestamptz);
    -- an event of an arm's name received since the Wait began, committed before this check (the
    -- intake's lock, taken shared in flowline_apply, orders the two): the plan could not see it,
    -- and the intake saw no waitpoint to wake. Wake the run now, its version moved on, so the next
    -- tick reads the event.
    missed_event := EXISTS (
      SELECT 1 FROM jsonb_to_recordset(item->'createdWaitpoints') AS w("kind" text, "eventName" text, "createdAt" timestamptz)
      JOIN inbound_events e ON e.tenant_id = r.tenant_id AND e.name = w."eventName" AND e.received_at >= coalesce(w."createdAt", now())
      WHERE w."kind" = 'event');
    wake_now := wake_now OR missed_event;
  END IF;
  IF jsonb_array_length(coalesce(item->'resolvedWaitpoints', '[]'::jsonb)) > 0 THEN
    UPDATE waitpoints wp SET
      status = CASE WHEN wp.status = 'waiting' THEN w."status" ELSE wp.status END,
      payload = CASE WHEN wp.status = 'waiting' AND w."status" = 'completed' THEN w."payload" ELSE wp.payload END,
      event_id = coalesce(w."eventId", wp.event_id),
      completed_at = CASE WHEN wp.status = 'waiting' AND w."status" = 'completed' THEN now() ELSE wp.completed_at END,
      consumed_at = now()
    FROM jsonb_to_recordset(item->'resolvedWaitpoints') AS w("id" uuid, "status" text, "payload" jsonb, "eventId" text)
    WHERE wp.run_id = rid AND wp.id = w."id" AND wp.consumed_at IS NULL;
  END IF;

  IF jsonb_array_length(coalesce(item->'children', '[]'::jsonb)) > 0 THEN
    FOR c IN SELECT * FROM jsonb_array_elements(item->'children') LOOP
      IF flowline_create_child(r, c, shard_count) THEN
        wake_now := true;
      END IF;
    END LOOP;
  END IF;

  IF cardinality(cancel_ids) > 0 THEN
    WITH cancelled AS (
      UPDATE runs SET status = 'Cancelling', cancel_reason = 'parent run cancelled', version = version + 1,
                      wake_at = now()
      WHERE id = ANY(cancel_ids) AND status IN ('Pending', 'Running', 'WaitingForApproval')
      RETURNING id)
    INSERT INTO intents (id, run_id, kind, node_key, payload, created_at)
    SELECT gen_random_uuid(), id, 'cancel', NULL, jsonb_build_object('reason', 'parent run cancelled'), now()
    FROM cancelled;
  END IF;

  IF r.parent_run_id IS NOT NULL AND new_status IS DISTINCT FROM r.status THEN
    UPDATE runs SET wake_at = now(), version = version + 1 WHERE id = r.parent_run_id;
  END IF;

  UPDATE runs SET
    status = new_status,
    failure_class = CASE WHEN rs ? 'failureClass' THEN rs->>'failureClass' ELSE failure_class END,
    reason = CASE WHEN rs ? 'reason' THEN rs->>'reason' ELSE reason END,
    total_attempts = CASE WHEN rs ? 'totalAttempts' THEN (rs->>'totalAttempts')::int ELSE total_attempts END,
    usage = CASE WHEN rs ? 'usage' THEN nullif(rs->'usage', 'null'::jsonb) ELSE usage END,
    step_allowance = CASE WHEN rs ? 'stepAllowance' THEN nullif(rs->'stepAllowance', 'null'::jsonb)
                          ELSE step_allowance END,
    started_at = CASE WHEN rs ? 'startedAt' THEN (rs->>'startedAt')::timestamptz ELSE started_at END,
    finished_at = CASE WHEN rs ? 'finishedAt' THEN (rs->>'finishedAt')::timestamptz ELSE finished_at END,
    cancel_reason = CASE WHEN rs ? 'cancelReason' THEN rs->>'cancelReason' ELSE cancel_reason END,
    output = CASE WHEN rs ? 'output' THEN nullif(rs->'output', 'null'::jsonb) ELSE output END,
    -- a missed event moves the version once more: a cached snapshot of this commit lacks it
    version = version + CASE WHEN missed_event THEN 2 ELSE 1 END,
    last_seq = last_seq + jsonb_array_length(evs),
    wake_at = CASE
      WHEN wake_now
        OR EXISTS (SELECT 1 FROM intents i WHERE i.run_id = rid AND i.applied_at IS NULL) THEN now()
      ELSE (item->>'wakeAt')::timestamptz END
  WHERE id = rid;
  RETURN true;
END
$$;
