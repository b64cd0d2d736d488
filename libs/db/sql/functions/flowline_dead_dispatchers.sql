-- The live-by-lease dispatchers whose process is gone: each registered a liveness key, a
-- session-level advisory lock its process holds on a connection of its own for its whole life.
-- When the process dies (even by SIGKILL) the kernel closes that connection, Postgres ends the
-- session and the lock is released at once, so no session of this database holds it any more.
-- A bigint advisory key shows in pg_locks as classid (high 32 bits), objid (low 32 bits) and
-- objsubid 1; keys are positive, so the two halves rebuild it exactly.
CREATE OR REPLACE FUNCTION flowline_dead_dispatchers() RETURNS TABLE (id text)
LANGUAGE sql STABLE AS $$
  SELECT d.id FROM dispatchers d
  WHERE d.liveness_key IS NOT NULL AND d.expires_at > now()
    AND NOT EXISTS (
      SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND ((l.classid::bigint << 32) | l.objid::bigint) = d.liveness_key)
$$;
