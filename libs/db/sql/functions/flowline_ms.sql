-- Milliseconds since the epoch of a timestamptz, as the planner and the API count time.
-- Written through `AT TIME ZONE 'UTC'` (immutable) rather than extract(epoch FROM timestamptz)
-- (which Postgres marks STABLE): the body is really immutable as declared, gives the same
-- milliseconds for every instant whatever the session time zone, and the planner inlines it into
-- the queries that call it instead of running tens of thousands of function calls per window.
CREATE OR REPLACE FUNCTION flowline_ms(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT floor(extract(epoch FROM t AT TIME ZONE 'UTC') * 1000)::bigint
$$;
