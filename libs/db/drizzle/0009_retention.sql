-- Retention (issue #17): the pruner finds a tenant's expired terminal runs oldest first,
-- and deletes the rows of every table that names them by run_id.
CREATE INDEX IF NOT EXISTS "runs_tenant_terminal_finished_idx" ON "runs" USING btree ("tenant_id","finished_at") WHERE status in ('Completed', 'Failed', 'Cancelled');--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "intents_run_idx" ON "intents" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "node_results_run_idx" ON "node_results" USING btree ("run_id");
