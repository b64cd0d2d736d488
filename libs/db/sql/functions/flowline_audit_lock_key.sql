-- Advisory-lock key of one tenant's audit chain: the chainer (flowline_audit_chain) and the
-- retention prune take it, so the head and the checkpoint in audit_chains move one pass at a time.
CREATE OR REPLACE FUNCTION flowline_audit_lock_key(tenant text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT hashtextextended('audit' || chr(31) || tenant, 0)
$$;
