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
  k bigint;
BEGIN
  -- The event names this batch parks Waits on, locked shared in key order before any row is
  -- locked (flowline_event_lock_key): the one wait a function of this folder makes. It is safe:
  -- this statement is its transaction's first, so nothing is held yet, and the intake holding
  -- the exclusive side takes its own locks in the same key order before it touches a row, then
  -- commits at once. Each item's commit then checks the events it could have missed.
  FOR k IN
    SELECT DISTINCT flowline_event_lock_key(r.tenant_id, w->>'eventName') AS key
    FROM jsonb_array_elements(batch->'items') AS it
    CROSS JOIN LATERAL jsonb_array_elements(coalesce(it->'createdWaitpoints', '[]'::jsonb)) AS w
    JOIN runs r ON r.id = (it->>'runId')::uuid
    WHERE w->>'kind' = 'event'
    ORDER BY key
  LOOP
    PERFORM pg_advisory_xact_lock_shared(k);
  END LOOP;
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
