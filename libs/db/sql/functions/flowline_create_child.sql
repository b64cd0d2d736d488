-- Creates a child run for a Subgraph node of `parent` (called by flowline_apply_run): the
-- child's definition is read within the parent's tenant and the child inherits the parent's
-- priority; a `stateSeed` (a Subworkflow's stateIn) becomes the child's state log row at seq 0. A definition that is gone fails the child at once (ValidationFailed) instead of
-- leaving the parent waiting on a run that will never start.
-- The version: `version` (chosen by the applier from the node's pin, the parent's alias and the
-- child definition's aliases, libs/graph `childVersion`) other than the latest runs from the
-- graph and parsed graph stored with that version; absent, the latest. `alias` is recorded as the
-- child's version alias (its own children follow it). `refused` (the chosen alias is not the
-- child definition's), or a version retired, never saved or kept without its parsed graph, fails
-- the child at once with the reason, like a missing definition.
CREATE OR REPLACE FUNCTION flowline_create_child(parent runs, c jsonb, shard_count int) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  d definitions%ROWTYPE;
  cid uuid := (c->>'childRunId')::uuid;
  detail jsonb := jsonb_build_object('definitionId', c->>'definitionId', 'parentRunId', parent.id,
                                     'parentNodeKey', c->>'nodeKey');
  v_version int;
  v_graph jsonb;
  v_plan jsonb;
  v_hash text;
  why text := 'definition ' || (c->>'definitionId') || ' not found';
BEGIN
  SELECT * INTO d FROM definitions WHERE id = (c->>'definitionId')::uuid AND tenant_id = parent.tenant_id;
  IF FOUND THEN
    v_version := d.version; v_graph := d.graph; v_plan := d.plan_graph; v_hash := d.graph_hash;
    IF c ? 'refused' THEN
      why := c->>'refused';
    ELSIF c ? 'version' AND (c->>'version')::int <> d.version THEN
      v_version := (c->>'version')::int;
      SELECT dv.graph, dv.plan_graph, dv.graph_hash INTO v_graph, v_plan, v_hash FROM definition_versions dv
      WHERE dv.definition_id = d.id AND dv.tenant_id = parent.tenant_id AND dv.version = v_version
        AND dv.retired_at IS NULL AND dv.plan_graph IS NOT NULL;
      IF NOT FOUND THEN
        why := 'version ' || v_version || ' of definition ' || d.id || ' is retired, was never saved, or was saved before versions kept their parsed graph';
      END IF;
    END IF;
    IF v_plan IS NOT NULL AND NOT c ? 'refused' THEN
      detail := detail || jsonb_build_object('definitionVersion', v_version) || CASE WHEN c ? 'alias' THEN jsonb_build_object('alias', c->>'alias') ELSE '{}'::jsonb END;
      INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                        wake_at, input, parent_run_id, parent_node_key, depth, last_seq, created_at, priority, version_alias)
      VALUES (cid, parent.tenant_id, d.id, v_version, v_graph, v_plan, v_hash, 'Pending',
              flowline_shard_of(cid, shard_count), now(), coalesce(c->'input', 'null'::jsonb), parent.id,
              c->>'nodeKey', parent.depth + 1, 1, now(), parent.priority, c->>'alias');
      INSERT INTO node_runs (run_id, node_key, kind, status, attempt, attempt_limit)
      SELECT cid, n->>'key', n->>'kind', 'Pending', 0, coalesce((n->>'maxAttempts')::int, 1)
      FROM jsonb_array_elements(v_plan->'nodes') AS n;
      INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES (cid, 1, 'run.created', NULL, now(), detail);
      -- a Subworkflow's stateIn: the child's state log starts with this base entry (seq 0, sealed by the caller)
      IF c ? 'stateSeed' THEN
        INSERT INTO run_state_writes (run_id, seq, tenant_id, entries) VALUES (cid, 0, parent.tenant_id, c->'stateSeed');
      END IF;
      RETURN false;
    END IF;
  END IF;
  INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status,
                    failure_class, reason, shard, input, parent_run_id, parent_node_key, depth, last_seq, created_at,
                    finished_at, priority)
  VALUES (cid, parent.tenant_id, (c->>'definitionId')::uuid, 0, 'null'::jsonb, 'null'::jsonb, '', 'Failed',
          'ValidationFailed', why, flowline_shard_of(cid, shard_count),
          coalesce(c->'input', 'null'::jsonb), parent.id, c->>'nodeKey', parent.depth + 1, 2, now(), now(), parent.priority);
  INSERT INTO events (run_id, seq, kind, node_key, at, detail)
  VALUES (cid, 1, 'run.created', NULL, now(), detail),
         (cid, 2, 'run.failed', NULL, now(), jsonb_build_object('failureClass', 'ValidationFailed'));
  RETURN true;
END
$$;
