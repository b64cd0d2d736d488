-- flowline_load_snapshots returns one more column (the run's unconsumed signals): a function's
-- result type cannot be replaced in place, so the old one is dropped here and its file
-- (sql/functions/flowline_load_snapshots.sql) creates the new one after the migrations.
DROP FUNCTION IF EXISTS flowline_load_snapshots(uuid[], text[], int, text[]);
