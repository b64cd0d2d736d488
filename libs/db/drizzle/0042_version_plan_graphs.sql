ALTER TABLE "definition_versions" ADD COLUMN "plan_graph" jsonb;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "alias" text;