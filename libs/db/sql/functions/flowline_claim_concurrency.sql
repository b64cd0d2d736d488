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
