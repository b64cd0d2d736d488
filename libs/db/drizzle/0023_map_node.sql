ALTER TABLE "node_runs" ADD COLUMN "map_state" jsonb;--> statement-breakpoint
ALTER TABLE "node_runs" ADD COLUMN "live_children" uuid[];--> statement-breakpoint
CREATE INDEX "runs_parent_live_idx" ON "runs" USING btree ("parent_run_id") WHERE parent_run_id is not null and status not in ('Completed', 'Failed', 'Cancelled');