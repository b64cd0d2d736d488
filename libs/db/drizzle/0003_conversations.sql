CREATE TABLE "conversations" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"bound_run_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversations_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"tenant_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"role" text NOT NULL,
	"text" text NOT NULL,
	"attachments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"run_id" uuid,
	"node_key" text,
	"attempt" integer,
	"request_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "node_runs" ADD COLUMN "publishes" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "node_runs" ADD COLUMN "published_attempt" integer;--> statement-breakpoint
CREATE INDEX "messages_conversation_seq_idx" ON "messages" USING btree ("tenant_id","conversation_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_tenant_request_uq" ON "messages" USING btree ("tenant_id","request_id") WHERE request_id is not null;--> statement-breakpoint
CREATE INDEX "messages_run_idx" ON "messages" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "runs_tenant_conversation_idx" ON "runs" USING btree ("tenant_id","conversation_id","created_at" DESC NULLS LAST,"id") WHERE conversation_id is not null;--> statement-breakpoint
CREATE INDEX "node_runs_unpublished_idx" ON "node_runs" USING btree ("run_id") WHERE publishes and status = 'Succeeded' and published_attempt is distinct from attempt;