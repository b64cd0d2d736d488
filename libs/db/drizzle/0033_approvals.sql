ALTER TABLE "definition_versions" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "node_runs" ADD COLUMN "approvals" jsonb;