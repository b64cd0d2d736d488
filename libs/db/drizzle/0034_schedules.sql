CREATE TABLE "schedule_slots" (
	"schedule_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"slot_at" timestamp with time zone NOT NULL,
	"source" text DEFAULT 'cron' NOT NULL,
	"outcome" text NOT NULL,
	"run_id" uuid,
	"reason" text,
	"decided_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "schedules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"key" text NOT NULL,
	"definition_id" uuid NOT NULL,
	"definition_version" integer,
	"pinned_graph" jsonb,
	"pinned_plan_graph" jsonb,
	"pinned_graph_hash" text,
	"input" jsonb DEFAULT 'null'::jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"spec" jsonb NOT NULL,
	"policy" jsonb NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"paused_reason" text,
	"next_fire_at" timestamp with time zone,
	"last_slot_at" timestamp with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "not_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "schedule_id" uuid;--> statement-breakpoint
ALTER TABLE "schedule_slots" ADD CONSTRAINT "schedule_slots_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "schedule_slots_pk" ON "schedule_slots" USING btree ("schedule_id","slot_at");--> statement-breakpoint
CREATE INDEX "schedule_slots_buffered_idx" ON "schedule_slots" USING btree ("schedule_id","slot_at") WHERE outcome = 'buffered';--> statement-breakpoint
CREATE UNIQUE INDEX "schedules_tenant_key_uq" ON "schedules" USING btree ("tenant_id","key");--> statement-breakpoint
CREATE INDEX "schedules_tenant_created_idx" ON "schedules" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE INDEX "schedules_due_idx" ON "schedules" USING btree ("next_fire_at") WHERE next_fire_at is not null and not paused;--> statement-breakpoint
CREATE INDEX "runs_schedule_idx" ON "runs" USING btree ("schedule_id","created_at") WHERE schedule_id is not null;