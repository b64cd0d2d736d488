CREATE TABLE "waitpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"node_key" text NOT NULL,
	"arm_index" integer NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"schema" jsonb,
	"single_use" boolean DEFAULT true NOT NULL,
	"event_name" text,
	"payload" jsonb,
	"event_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"consumed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "inbound_events" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"data" jsonb NOT NULL,
	"ts" timestamp with time zone,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inbound_events_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE INDEX "waitpoints_run_idx" ON "waitpoints" USING btree ("run_id","created_at");--> statement-breakpoint
CREATE INDEX "waitpoints_tenant_status_idx" ON "waitpoints" USING btree ("tenant_id","status","created_at");--> statement-breakpoint
CREATE INDEX "waitpoints_event_waiting_idx" ON "waitpoints" USING btree ("tenant_id","event_name") WHERE kind = 'event' and consumed_at is null;--> statement-breakpoint
CREATE INDEX "inbound_events_name_idx" ON "inbound_events" USING btree ("tenant_id","name","received_at");--> statement-breakpoint
-- flowline_load_snapshots returns one more column (the run's waitpoints and the events they may
-- take): a function's result type cannot be replaced in place, so the old one is dropped here and
-- its file (sql/functions/flowline_load_snapshots.sql) creates the new one after the migrations.
DROP FUNCTION IF EXISTS flowline_load_snapshots(uuid[], text[], int, text[]);
