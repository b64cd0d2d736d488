CREATE TABLE "run_signals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"channel" text NOT NULL,
	"payload" jsonb NOT NULL,
	"request_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"consumed_at" timestamp with time zone,
	"consumed_by" text
);
--> statement-breakpoint
CREATE UNIQUE INDEX "run_signals_request_idx" ON "run_signals" USING btree ("run_id","request_id");--> statement-breakpoint
CREATE INDEX "run_signals_unconsumed_idx" ON "run_signals" USING btree ("run_id","channel","created_at") WHERE consumed_at is null;