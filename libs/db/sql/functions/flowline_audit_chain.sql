-- Chains a tenant's committed, unchained audit rows (at most `max_rows`): each gets the next
-- `seq`, the previous row's hash as `prev_hash` and its own `hash` (flowline_audit_hash), and the
-- tenant's head in audit_chains moves to the last one. One pass at a time per tenant: the
-- advisory lock serializes passes (another API replica's, the sweep's, a prune) without locking
-- anything a run start's transaction holds — the rows are inserted unchained, so a start never
-- waits on the chain. Under READ COMMITTED the scan after the lock sees every row committed
-- before it, so seq follows the order rows became visible to the chainer.
-- A row is ready once its request recorded the answer (`status` set), or once it is older than
-- `grace` (the process ended between the commit and the answer; its status stays null).
-- Answers the number of rows chained.
CREATE OR REPLACE FUNCTION flowline_audit_chain(tenant text, grace interval, max_rows integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  h_seq bigint;
  h_hash text;
  r audit_log;
  n integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(flowline_audit_lock_key(tenant));
  INSERT INTO audit_chains (tenant_id) VALUES (tenant) ON CONFLICT (tenant_id) DO NOTHING;
  SELECT c.head_seq, c.head_hash INTO h_seq, h_hash FROM audit_chains c WHERE c.tenant_id = tenant;
  FOR r IN
    SELECT * FROM audit_log a
    WHERE a.tenant_id = tenant AND a.seq IS NULL AND (a.status IS NOT NULL OR a.at < now() - grace)
    ORDER BY a.id
    LIMIT max_rows
    FOR UPDATE SKIP LOCKED
  LOOP
    h_seq := h_seq + 1;
    r.seq := h_seq;
    r.prev_hash := h_hash;
    h_hash := flowline_audit_hash(h_hash, r);
    UPDATE audit_log SET seq = r.seq, prev_hash = r.prev_hash, hash = h_hash WHERE id = r.id;
    n := n + 1;
  END LOOP;
  IF n > 0 THEN
    UPDATE audit_chains SET head_seq = h_seq, head_hash = h_hash WHERE tenant_id = tenant;
  END IF;
  RETURN n;
END
$$;
