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
