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
