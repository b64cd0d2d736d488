ALTER TABLE "runs" ADD COLUMN "priority" integer DEFAULT 3 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "concurrency_key" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "concurrency_limit" integer;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "concurrency_claimed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "runs_tenant_pending_priority_idx" ON "runs" USING btree ("tenant_id","priority" DESC NULLS LAST,"created_at","id") WHERE status = 'Pending' and parent_run_id is null;--> statement-breakpoint
CREATE INDEX "runs_concurrency_key_idx" ON "runs" USING btree ("tenant_id","definition_id","concurrency_key") WHERE concurrency_key is not null and status not in ('Completed', 'Failed', 'Cancelled');--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_priority_range" CHECK (priority BETWEEN 1 AND 5);--> statement-breakpoint

-- flowline_create_child as in 0002, and the child inherits its parent's priority.
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
--> statement-breakpoint

-- Concurrency keys: each Pending top-level run of `ids` with a key and no place
-- yet takes a place of its key (tenant, definition, key value) when fewer than its limit are
-- held (claimed runs not ended) counting the key's unplaced Pending runs ahead of it (higher
-- priority, or the same and older). Guard: a try-lock per key (a key another transaction
-- holds is left for the next tick: never waits, so two dispatchers can neither overshoot a
-- limit nor deadlock) and the run row SKIP LOCKED.
-- Result: the ids that took a place.
CREATE OR REPLACE FUNCTION flowline_claim_concurrency(ids uuid[]) RETURNS uuid[]
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  live int;
  ahead int;
  claimed uuid[] := '{}';
BEGIN
  FOR r IN
    SELECT id, tenant_id, definition_id, concurrency_key, concurrency_limit, priority, created_at
    FROM runs
    WHERE id = ANY(ids) AND status = 'Pending' AND parent_run_id IS NULL
      AND concurrency_key IS NOT NULL AND NOT concurrency_claimed
    ORDER BY tenant_id, definition_id, concurrency_key, priority DESC, created_at, id
  LOOP
    IF NOT pg_try_advisory_xact_lock(hashtextextended(r.tenant_id || '/' || r.definition_id || '/' || r.concurrency_key, 16)) THEN
      CONTINUE;
    END IF;
    SELECT count(*) INTO live FROM runs x
    WHERE x.tenant_id = r.tenant_id AND x.definition_id = r.definition_id AND x.concurrency_key = r.concurrency_key
      AND x.concurrency_claimed AND x.status NOT IN ('Completed', 'Failed', 'Cancelled');
    SELECT count(*) INTO ahead FROM runs x
    WHERE x.tenant_id = r.tenant_id AND x.definition_id = r.definition_id AND x.concurrency_key = r.concurrency_key
      AND x.status = 'Pending' AND x.parent_run_id IS NULL AND NOT x.concurrency_claimed
      AND (x.priority > r.priority OR (x.priority = r.priority AND (x.created_at, x.id) < (r.created_at, r.id)));
    IF live + ahead < r.concurrency_limit THEN
      UPDATE runs SET concurrency_claimed = true
      WHERE id = (SELECT id FROM runs WHERE id = r.id FOR UPDATE SKIP LOCKED);
      IF FOUND THEN
        claimed := claimed || r.id;
      END IF;
    END IF;
  END LOOP;
  RETURN claimed;
END
$$;
