-- Registers/heartbeats a dispatcher and rebalances shard leases, all on the database clock.
-- A dispatcher is live until its own heartbeat + lease_ms (dispatchers.expires_at), and, when it
-- registered a liveness key, only while a session still holds that advisory lock (see
-- flowline_dead_dispatchers): a peer whose process died is expired here with its leases, so its
-- shards are taken in this call instead of after its lease runs out.
-- Fair share: ceil(shard_count / live dispatchers).
-- Effect: shard rows 0..shard_count-1 exist; the caller's leases renewed to now()+lease_ms;
-- leases beyond its fair share released (highest shards first); expired or unowned shards
-- taken (SKIP LOCKED, re-checked) up to the fair share; long-dead dispatcher rows deleted.
-- Result: the shards the caller owns, ascending.
CREATE OR REPLACE FUNCTION flowline_claim_shards(dispatcher text, shard_count int, lease_ms int, liveness bigint) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
  lease interval := make_interval(secs => lease_ms / 1000.0);
  live int;
  fair int;
  owned int;
BEGIN
  INSERT INTO dispatchers (id, started_at, heartbeat_at, expires_at, liveness_key) VALUES (dispatcher, now(), now(), now() + lease, liveness)
  ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), expires_at = now() + lease, liveness_key = liveness;
  DELETE FROM dispatchers WHERE expires_at < now() - interval '1 hour';
  -- peers whose process is gone: expired now, their leases free for the taking below
  WITH dead AS (
    UPDATE dispatchers SET expires_at = now() WHERE id IN (SELECT id FROM flowline_dead_dispatchers() WHERE id <> dispatcher)
    RETURNING id)
  UPDATE shard_leases SET expires_at = now() WHERE owner IN (SELECT id FROM dead);
  IF (SELECT count(*) FROM shard_leases WHERE shard < shard_count) < shard_count THEN
    INSERT INTO shard_leases (shard, owner, expires_at)
    SELECT s, NULL, now() FROM generate_series(0, shard_count - 1) AS s
    ON CONFLICT (shard) DO NOTHING;
  END IF;
  SELECT count(*) INTO live FROM dispatchers WHERE expires_at > now();
  fair := ceil(shard_count::numeric / greatest(live, 1));

  UPDATE shard_leases SET expires_at = now() + lease WHERE owner = dispatcher AND shard < shard_count;
  SELECT count(*) INTO owned FROM shard_leases WHERE owner = dispatcher AND shard < shard_count;

  IF owned > fair THEN
    UPDATE shard_leases SET owner = NULL, expires_at = now()
    WHERE shard IN (SELECT shard FROM shard_leases WHERE owner = dispatcher AND shard < shard_count
                    ORDER BY shard DESC LIMIT owned - fair);
  ELSIF owned < fair THEN
    UPDATE shard_leases SET owner = dispatcher, expires_at = now() + lease
    WHERE shard IN (SELECT shard FROM shard_leases
                    WHERE shard < shard_count AND (owner IS NULL OR expires_at <= now())
                    ORDER BY shard LIMIT fair - owned FOR UPDATE SKIP LOCKED)
      AND (owner IS NULL OR expires_at <= now());
  END IF;

  -- leases of shards beyond the configured count are never owned
  UPDATE shard_leases SET owner = NULL WHERE owner = dispatcher AND shard >= shard_count;
  RETURN ARRAY(SELECT shard FROM shard_leases WHERE owner = dispatcher ORDER BY shard);
END
$$;
