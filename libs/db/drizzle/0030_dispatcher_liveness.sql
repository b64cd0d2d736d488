ALTER TABLE "dispatchers" ADD COLUMN "liveness_key" bigint;--> statement-breakpoint
-- flowline_claim_shards takes the caller's liveness key: the three-argument form is dropped here
-- and its file (sql/functions/flowline_claim_shards.sql) creates the four-argument one after the
-- migrations.
DROP FUNCTION IF EXISTS flowline_claim_shards(text, int, int);
