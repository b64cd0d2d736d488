CREATE TABLE "definitions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"kind" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"graph" jsonb NOT NULL,
	"plan_graph" jsonb NOT NULL,
	"graph_hash" text NOT NULL,
	"node_count" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"definition_id" uuid NOT NULL,
	"definition_version" integer NOT NULL,
	"graph" jsonb NOT NULL,
	"plan_graph" jsonb NOT NULL,
	"graph_hash" text NOT NULL,
	"status" text NOT NULL,
	"failure_class" text DEFAULT 'None' NOT NULL,
	"reason" text,
	"paused" boolean DEFAULT false NOT NULL,
	"version" integer DEFAULT 0 NOT NULL,
	"last_seq" integer DEFAULT 0 NOT NULL,
	"shard" integer NOT NULL,
	"wake_at" timestamp with time zone,
	"request_id" text,
	"input" jsonb DEFAULT 'null'::jsonb NOT NULL,
	"output" jsonb,
	"parent_run_id" uuid,
	"parent_node_key" text,
	"conversation_id" text,
	"depth" integer DEFAULT 0 NOT NULL,
	"total_attempts" integer DEFAULT 0 NOT NULL,
	"breakpoints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"step_allowance" jsonb,
	"edge_overrides" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"cancel_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "node_runs" (
	"run_id" uuid NOT NULL,
	"node_key" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"attempt_limit" integer NOT NULL,
	"invocation_id" uuid,
	"failure_class" text DEFAULT 'None' NOT NULL,
	"reason" text,
	"input" jsonb,
	"input_override" jsonb,
	"output" jsonb,
	"not_before" timestamp with time zone,
	"deadline_at" timestamp with time zone,
	"queued_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"steering" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"pending_decision_kind" text,
	"decision" jsonb,
	"held" boolean DEFAULT false NOT NULL,
	"child_run_id" uuid,
	"loop_state" jsonb,
	CONSTRAINT "node_runs_run_id_node_key_pk" PRIMARY KEY("run_id","node_key")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"run_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"kind" text NOT NULL,
	"node_key" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "events_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
--> statement-breakpoint
CREATE TABLE "intents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"node_key" text,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "node_results" (
	"invocation_id" uuid PRIMARY KEY NOT NULL,
	"run_id" uuid NOT NULL,
	"node_key" text NOT NULL,
	"outcome" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "dispatchers" (
	"id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shard_leases" (
	"shard" integer PRIMARY KEY NOT NULL,
	"owner" text,
	"expires_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "definitions_tenant_created_idx" ON "definitions" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_tenant_request_uq" ON "runs" USING btree ("tenant_id","request_id") WHERE request_id is not null;--> statement-breakpoint
CREATE INDEX "runs_shard_wake_idx" ON "runs" USING btree ("shard","wake_at") WHERE wake_at is not null;--> statement-breakpoint
CREATE INDEX "runs_tenant_created_idx" ON "runs" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE INDEX "runs_tenant_status_idx" ON "runs" USING btree ("tenant_id","status");--> statement-breakpoint
CREATE INDEX "runs_parent_idx" ON "runs" USING btree ("parent_run_id");--> statement-breakpoint
CREATE INDEX "runs_definition_idx" ON "runs" USING btree ("definition_id");--> statement-breakpoint
CREATE INDEX "node_runs_invocation_idx" ON "node_runs" USING btree ("invocation_id");--> statement-breakpoint
CREATE INDEX "intents_unapplied_idx" ON "intents" USING btree ("run_id","created_at") WHERE applied_at is null;