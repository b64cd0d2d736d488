-- Advisory-lock key of a run: the first 64 bits of its uuid. The dispatcher and the API lock a
-- run under this key (try-locks only: no function of this folder waits on a run lock; the one wait
-- is flowline_apply's on event names, see flowline_event_lock_key).
CREATE OR REPLACE FUNCTION flowline_run_lock_key(run_id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ('x' || substr(replace(run_id::text, '-', ''), 1, 16))::bit(64)::bigint
$$;
