ALTER TABLE "dispatchers" ADD COLUMN "expires_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE INDEX "node_runs_inflight_idx" ON "node_runs" USING btree ("run_id") WHERE status in ('Queued', 'Running');--> statement-breakpoint
CREATE INDEX "node_results_unapplied_idx" ON "node_results" USING btree ("run_id") WHERE applied_at is null;