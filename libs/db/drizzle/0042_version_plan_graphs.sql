ALTER TABLE "definition_versions" ADD COLUMN "plan_graph" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "version_alias" text;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "alias" text;