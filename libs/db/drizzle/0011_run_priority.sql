ALTER TABLE "runs" ADD COLUMN "priority" integer DEFAULT 3 NOT NULL;--> statement-breakpoint
CREATE INDEX "runs_tenant_pending_priority_idx" ON "runs" USING btree ("tenant_id","priority" DESC NULLS LAST,"created_at","id") WHERE status = 'Pending' and parent_run_id is null;--> statement-breakpoint
-- Runs can't be forced outside 1–5 by any writer (the API validates first; this is the backstop).
ALTER TABLE "runs" ADD CONSTRAINT "runs_priority_range" CHECK (priority BETWEEN 1 AND 5);--> statement-breakpoint

-- flowline_create_child as in 0002, and the child inherits its parent's priority (issue #16).
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
