-- Creates a child run for a Subgraph node of `parent` (called by flowline_apply_run): the
-- child's definition is read within the parent's tenant and the child inherits the parent's
-- priority; a `stateSeed` (a Subworkflow's stateIn) becomes the child's state log row at seq 0. A definition that is gone fails the child at once (ValidationFailed) instead of
-- leaving the parent waiting on a run that will never start.
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
                      wake_at, input, parent_run_id, parent_node_key, depth, last_seq, created_at, priority)
    VALUES (cid, parent.tenant_id, d.id, d.version, d.graph, d.plan_graph, d.graph_hash, 'Pending',
            flowline_shard_of(cid, shard_count), now(), coalesce(c->'input', 'null'::jsonb), parent.id,
            c->>'nodeKey', parent.depth + 1, 1, now(), parent.priority);
    INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit)
    SELECT cid, n->>'key', n->>'kind', 'Pending', 0, coalesce((n->>'maxAttempts')::int, 1)
    FROM jsonb_array_elements(d.plan_graph->'nodes') AS n;
    INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES (cid, 1, 'run.created', NULL, now(), detail);
    -- a Subworkflow's stateIn: the child's state log starts with this base entry (seq 0, sealed by the caller)
    IF c ? 'stateSeed' THEN
      INSERT INTO run_state_writes (run_id, seq, tenant_id, entries) VALUES (cid, 0, parent.tenant_id, c->'stateSeed');
    END IF;
    RETURN false;
  END IF;
  INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status,
                    failure_class, reason, shard, input, parent_run_id, parent_node_key, depth, last_seq, created_at,
                    finished_at, priority)
  VALUES (cid, parent.tenant_id, (c->>'definitionId')::uuid, 0, 'null'::jsonb, 'null'::jsonb, '', 'Failed',
          'ValidationFailed', 'definition ' || (c->>'definitionId') || ' not found', flowline_shard_of(cid, shard_count),
          coalesce(c->'input', 'null'::jsonb), parent.id, c->>'nodeKey', parent.depth + 1, 2, now(), now(), parent.priority);
  INSERT INTO events (run_id, seq, kind, node_key, at, detail)
  VALUES (cid, 1, 'run.created', NULL, now(), detail),
         (cid, 2, 'run.failed', NULL, now(), jsonb_build_object('failureClass', 'ValidationFailed'));
  RETURN true;
END
$$;
