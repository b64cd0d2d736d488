-- Advisory-lock key of one event name of a tenant. The event intake (POST /v1/events) takes it
-- exclusively before it inserts an event and looks for the Waits that event wakes; a dispatcher
-- commit that parks a Wait on an event arm of that name takes it shared before anything else
-- (flowline_apply). So of an intake and a park that overlap, one commits before the other reads:
-- either the intake sees the new waitpoint and wakes its run, or the park's own check sees the
-- event — an event posted while the tick that parks its Wait is in flight is never lost.
CREATE OR REPLACE FUNCTION flowline_event_lock_key(tenant text, name text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT hashtextextended(tenant || chr(31) || name, 0)
$$;
