DROP INDEX "runs_definition_idx";--> statement-breakpoint
DROP INDEX "runs_parent_idx";--> statement-breakpoint
CREATE INDEX "runs_parent_idx" ON "runs" USING btree ("parent_run_id") WHERE parent_run_id is not null;