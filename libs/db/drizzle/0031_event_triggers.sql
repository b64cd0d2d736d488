CREATE TABLE "event_matches" (
	"tenant_id" text NOT NULL,
	"event_id" text NOT NULL,
	"definition_id" uuid NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"run_id" uuid,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_matches_tenant_id_event_id_definition_id_pk" PRIMARY KEY("tenant_id","event_id","definition_id")
);
--> statement-breakpoint
ALTER TABLE "definitions" ADD COLUMN "trigger_events" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "inbound_events" ADD COLUMN "fanout_due" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "definitions_triggers_idx" ON "definitions" USING btree ("tenant_id") WHERE cardinality("definitions"."trigger_events") > 0;--> statement-breakpoint
CREATE INDEX "inbound_events_fanout_idx" ON "inbound_events" USING btree ("received_at") WHERE "inbound_events"."fanout_due";