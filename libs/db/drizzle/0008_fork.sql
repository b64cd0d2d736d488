ALTER TABLE "runs" ADD COLUMN "forked_from_run_id" uuid;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "forked_from_node_key" text;--> statement-breakpoint
ALTER TABLE "node_runs" ADD COLUMN "reused_from_run_id" uuid;