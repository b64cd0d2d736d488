-- The hash of one audit row chained after `prev` (the previous row's hash, '' for the first row
-- of a chain): sha256 over `prev`, a newline and the row's recorded members as a jsonb array's
-- text. jsonb prints canonically (members sorted, no insignificant whitespace), and the time is
-- spelled in UTC to the microsecond, so the text — and the hash — does not depend on the
-- session's settings. Chaining (flowline_audit_chain) and verifying (GET /v1/audit/verify) call
-- this one function, so both compute the same text.
CREATE OR REPLACE FUNCTION flowline_audit_hash(prev text, a audit_log) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT encode(sha256(convert_to(prev || chr(10) || jsonb_build_array(
    a.tenant_id, a.seq, to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    a.principal, a.key_prefix, a.action, a.resource_type, a.resource_id, a.request_id,
    a.client_address, a.status, a.error_code, a.patch
  )::text, 'UTF8')), 'hex')
$$;
