CREATE TABLE "bulk_job_runs" (
	"bulk_id" uuid NOT NULL,
	"run_id" uuid NOT NULL,
	"outcome" text,
	"reason" text,
	CONSTRAINT "bulk_job_runs_bulk_id_run_id_pk" PRIMARY KEY("bulk_id","run_id")
);
--> statement-breakpoint
CREATE TABLE "bulk_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"request_id" text,
	"action" text NOT NULL,
	"filter" jsonb NOT NULL,
	"options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text NOT NULL,
	"total" integer NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"cursor" uuid,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"claims" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "bulk_jobs_tenant_request_uq" ON "bulk_jobs" USING btree ("tenant_id","request_id") WHERE request_id is not null;--> statement-breakpoint
CREATE INDEX "bulk_jobs_open_idx" ON "bulk_jobs" USING btree ("created_at") WHERE status in ('Pending', 'Running');--> statement-breakpoint
CREATE INDEX "runs_metadata_idx" ON "runs" USING gin ("metadata" jsonb_path_ops);