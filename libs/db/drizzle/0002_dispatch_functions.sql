-- Server-side functions of the dispatcher hot path (called from libs/db/src/store).
-- Contract: no function here ever WAITS on a row or advisory lock (try-locks and
-- SKIP LOCKED only), so a dispatcher batch can neither block behind nor deadlock with
-- another dispatcher or an API transaction; a lock it cannot take is a conflict.

-- Advisory-lock key of a run: the first 64 bits of its uuid.
CREATE OR REPLACE FUNCTION flowline_run_lock_key(run_id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ('x' || substr(replace(run_id::text, '-', ''), 1, 16))::bit(64)::bigint
$$;
--> statement-breakpoint

-- Shard of a run: FNV-1a (32-bit) over the uuid text, modulo shard_count.
-- Must agree with shardOfRun() in src/store (a test holds them together).
CREATE OR REPLACE FUNCTION flowline_shard_of(run_id uuid, shard_count int) RETURNS int
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  h bigint := 2166136261;
  s text := run_id::text;
BEGIN
  FOR i IN 1..length(s) LOOP
    h := ((h # ascii(substr(s, i, 1))) * 16777619) % 4294967296;
  END LOOP;
  RETURN (h % shard_count)::int;
END
$$;
--> statement-breakpoint

-- Epoch milliseconds of a timestamptz (NULL stays NULL).
CREATE OR REPLACE FUNCTION flowline_ms(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT floor(extract(epoch FROM t) * 1000)::bigint
$$;
--> statement-breakpoint

-- Creates a child run (Loop iteration / Subworkflow) of `parent`.
-- Input c: { nodeKey, childRunId, definitionId, input }.
-- Effect: run row Pending (due now) pinning the definition's graph + plan_graph, one
-- Pending node row per plan_graph node, event run.created at seq 1. A definition that is
-- gone (or another tenant's) yields a child already Failed/ValidationFailed.
-- Result: true when the child was created terminal (the parent must tick again at once).
CREATE OR REPLACE FUNCTION flowline_create_child(parent runs, c jsonb, shard_count int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  d definitions%ROWTYPE;
  cid uuid := (c->>'childRunId')::uuid;
  detail jsonb := jsonb_build_object('definitionId', c->>'definitionId', 'parentRunId', parent.id,
                                     'parentNodeKey', c->>'nodeKey');
BEGIN
  SELECT * INTO d FROM definitions WHERE id = (c->>'definitionId')::uuid AND tenant_id = parent.tenant_id;
  IF FOUND THEN
    INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                      wake_at, input, parent_run_id, parent_node_key, depth, last_seq, created_at)
    VALUES (cid, parent.tenant_id, d.id, d.version, d.graph, d.plan_graph, d.graph_hash, 'Pending',
            flowline_shard_of(cid, shard_count), now(), coalesce(c->'input', 'null'::jsonb), parent.id,
            c->>'nodeKey', parent.depth + 1, 1, now());
    INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit)
    SELECT cid, n->>'key', n->>'kind', 'Pending', 0, coalesce((n->>'maxAttempts')::int, 1)
    FROM jsonb_array_elements(d.plan_graph->'nodes') AS n;
    INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES (cid, 1, 'run.created', NULL, now(), detail);
    RETURN false;
  END IF;
  INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status,
                    failure_class, reason, shard, input, parent_run_id, parent_node_key, depth, last_seq, created_at,
                    finished_at)
  VALUES (cid, parent.tenant_id, (c->>'definitionId')::uuid, 0, 'null'::jsonb, 'null'::jsonb, '', 'Failed',
          'ValidationFailed', 'definition ' || (c->>'definitionId') || ' not found', flowline_shard_of(cid, shard_count),
          coalesce(c->'input', 'null'::jsonb), parent.id, c->>'nodeKey', parent.depth + 1, 2, now(), now());
  INSERT INTO events (run_id, seq, kind, node_key, at, detail)
  VALUES (cid, 1, 'run.created', NULL, now(), detail),
         (cid, 2, 'run.failed', NULL, now(), jsonb_build_object('failureClass', 'ValidationFailed'));
  RETURN true;
END
$$;
--> statement-breakpoint

-- Applies one run's plan. Input item:
--   { runId, expectVersion, wakeOnly?, wakeAt (ISO|null), run: {column set, camelCase},
--     nodes: [{ nodeKey, expectStatus, expectAttempt, set }], events: [{ kind, nodeKey, detail }],
--     intentIds: [uuid], invocationIds: [uuid], children: [ChildStart], cancelChildren: [uuid] }
-- Guard (all or nothing, nothing written when any fails): the run advisory try-lock; the run
-- row at expectVersion (FOR UPDATE SKIP LOCKED); every patched node row at its expected
-- status and attempt (SKIP LOCKED); the parent row when the status changes and the rows of
-- children to cancel (SKIP LOCKED).
-- Effect: node patches; events numbered last_seq+1..; intents and node_results marked
-- applied; children created; children to cancel set Cancelling with a cancel intent; the
-- parent woken (version+1) on a status change; the run row patched with version+1,
-- last_seq+n and wake_at = wakeAt, or now() while unapplied intents/results remain.
-- wakeOnly items only move wake_at (version unchanged).
-- Result: true = applied, false = conflicted.
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
        WHEN EXISTS (SELECT 1 FROM intents i WHERE i.run_id = rid AND i.applied_at IS NULL)
          OR EXISTS (SELECT 1 FROM node_results nr WHERE nr.run_id = rid AND nr.applied_at IS NULL) THEN now()
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
      held = CASE WHEN p."set" ? 'held' THEN (p."set"->>'held')::boolean ELSE nr.held END,
      child_run_id = CASE WHEN p."set" ? 'childRunId' THEN (p."set"->>'childRunId')::uuid ELSE nr.child_run_id END,
      loop_state = CASE WHEN p."set" ? 'loop' THEN nullif(p."set"->'loop', 'null'::jsonb) ELSE nr.loop_state END
    FROM jsonb_to_recordset(patches) AS p("nodeKey" text, "set" jsonb)
    WHERE nr.run_id = rid AND nr.node_key = p."nodeKey";
  END IF;

  -- each statement below runs only when its list is non-empty: a hop costs few statements
  IF jsonb_array_length(evs) > 0 THEN
    INSERT INTO events (run_id, seq, kind, node_key, at, detail)
    SELECT rid, r.last_seq + e.ord, e.v->>'kind', e.v->>'nodeKey', now(), coalesce(e.v->'detail', '{}'::jsonb)
    FROM jsonb_array_elements(evs) WITH ORDINALITY AS e(v, ord);
  END IF;

  IF jsonb_array_length(coalesce(item->'intentIds', '[]'::jsonb)) > 0 THEN
    UPDATE intents SET applied_at = now()
    WHERE run_id = rid AND applied_at IS NULL
      AND id = ANY(ARRAY(SELECT jsonb_array_elements_text(item->'intentIds')::uuid));
  END IF;

  IF jsonb_array_length(coalesce(item->'invocationIds', '[]'::jsonb)) > 0 THEN
    UPDATE node_results SET applied_at = now()
    WHERE applied_at IS NULL
      AND invocation_id = ANY(ARRAY(SELECT jsonb_array_elements_text(item->'invocationIds')::uuid));
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
    step_allowance = CASE WHEN rs ? 'stepAllowance' THEN nullif(rs->'stepAllowance', 'null'::jsonb)
                          ELSE step_allowance END,
    started_at = CASE WHEN rs ? 'startedAt' THEN (rs->>'startedAt')::timestamptz ELSE started_at END,
    finished_at = CASE WHEN rs ? 'finishedAt' THEN (rs->>'finishedAt')::timestamptz ELSE finished_at END,
    cancel_reason = CASE WHEN rs ? 'cancelReason' THEN rs->>'cancelReason' ELSE cancel_reason END,
    output = CASE WHEN rs ? 'output' THEN nullif(rs->'output', 'null'::jsonb) ELSE output END,
    version = version + 1,
    last_seq = last_seq + jsonb_array_length(evs),
    wake_at = CASE
      WHEN wake_now
        OR EXISTS (SELECT 1 FROM intents i WHERE i.run_id = rid AND i.applied_at IS NULL)
        OR EXISTS (SELECT 1 FROM node_results nr WHERE nr.run_id = rid AND nr.applied_at IS NULL) THEN now()
      ELSE (item->>'wakeAt')::timestamptz END
  WHERE id = rid;
  RETURN true;
END
$$;
--> statement-breakpoint

-- Applies a batch of plans in the caller's single transaction (one round trip).
-- Input: { shardCount, items: [item of flowline_apply_run] }.
-- Result: { applied: [runId], conflicted: [runId] } in input order.
CREATE OR REPLACE FUNCTION flowline_apply(batch jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  item jsonb;
  applied jsonb := '[]'::jsonb;
  conflicted jsonb := '[]'::jsonb;
  shard_count int := (batch->>'shardCount')::int;
BEGIN
  FOR item IN SELECT * FROM jsonb_array_elements(batch->'items') LOOP
    IF flowline_apply_run(item, shard_count) THEN
      applied := applied || to_jsonb(item->>'runId');
    ELSE
      conflicted := conflicted || to_jsonb(item->>'runId');
    END IF;
  END LOOP;
  RETURN jsonb_build_object('applied', applied, 'conflicted', conflicted);
END
$$;
--> statement-breakpoint

-- Registers/heartbeats a dispatcher and rebalances shard leases, all on the database clock.
-- A dispatcher is live until its own heartbeat + lease_ms (dispatchers.expires_at).
-- Fair share: ceil(shard_count / live dispatchers).
-- Effect: shard rows 0..shard_count-1 exist; the caller's leases renewed to now()+lease_ms;
-- leases beyond its fair share released (highest shards first); expired or unowned shards
-- taken (SKIP LOCKED, re-checked) up to the fair share; long-dead dispatcher rows deleted.
-- Result: the shards the caller owns, ascending.
CREATE OR REPLACE FUNCTION flowline_claim_shards(dispatcher text, shard_count int, lease_ms int) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
  lease interval := make_interval(secs => lease_ms / 1000.0);
  live int;
  fair int;
  owned int;
BEGIN
  INSERT INTO dispatchers (id, started_at, heartbeat_at, expires_at) VALUES (dispatcher, now(), now(), now() + lease)
  ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), expires_at = now() + lease;
  DELETE FROM dispatchers WHERE expires_at < now() - interval '1 hour';
  IF (SELECT count(*) FROM shard_leases WHERE shard < shard_count) < shard_count THEN
    INSERT INTO shard_leases (shard, owner, expires_at)
    SELECT s, NULL, now() FROM generate_series(0, shard_count - 1) AS s
    ON CONFLICT (shard) DO NOTHING;
  END IF;
  SELECT count(*) INTO live FROM dispatchers WHERE expires_at > now();
  fair := ceil(shard_count::numeric / greatest(live, 1));

  UPDATE shard_leases SET expires_at = now() + lease WHERE owner = dispatcher AND shard < shard_count;
  SELECT count(*) INTO owned FROM shard_leases WHERE owner = dispatcher AND shard < shard_count;

  IF owned > fair THEN
    UPDATE shard_leases SET owner = NULL, expires_at = now()
    WHERE shard IN (SELECT shard FROM shard_leases WHERE owner = dispatcher AND shard < shard_count
                    ORDER BY shard DESC LIMIT owned - fair);
  ELSIF owned < fair THEN
    UPDATE shard_leases SET owner = dispatcher, expires_at = now() + lease
    WHERE shard IN (SELECT shard FROM shard_leases
                    WHERE shard < shard_count AND (owner IS NULL OR expires_at <= now())
                    ORDER BY shard LIMIT fair - owned FOR UPDATE SKIP LOCKED)
      AND (owner IS NULL OR expires_at <= now());
  END IF;

  -- leases of shards beyond the configured count are never owned
  UPDATE shard_leases SET owner = NULL WHERE owner = dispatcher AND shard >= shard_count;
  RETURN ARRAY(SELECT shard FROM shard_leases WHERE owner = dispatcher ORDER BY shard);
END
$$;
