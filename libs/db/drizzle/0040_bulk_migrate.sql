ALTER TABLE "bulk_job_runs" ADD COLUMN "details" jsonb;--> statement-breakpoint
ALTER TABLE "bulk_jobs" ADD COLUMN "pause_reason" text;--> statement-breakpoint
ALTER TABLE "bulk_jobs" ADD COLUMN "canary_released" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "bulk_jobs" ADD COLUMN "rate_base_done" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "bulk_jobs" ADD COLUMN "rate_base_failed" integer DEFAULT 0 NOT NULL;