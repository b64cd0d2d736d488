-- flowline_ms was declared IMMUTABLE over extract(epoch FROM timestamptz), which Postgres marks
-- STABLE, so the planner never inlined it: every call ran as a function execution of its own
-- (about 92,000 in one W3 window of 7,000 nodes, most of the snapshot load's cost).
-- Through `AT TIME ZONE 'UTC'` (immutable) the body is immutable as declared, gives the same
-- milliseconds for every instant, and is inlined into the queries that call it.
CREATE OR REPLACE FUNCTION flowline_ms(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT floor(extract(epoch FROM t AT TIME ZONE 'UTC') * 1000)::bigint
$$;
