CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"webhook_id" uuid NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"verdict" text NOT NULL,
	"status" integer NOT NULL,
	"reason" text,
	"dedupe_key" text,
	"content_type" text,
	"body" jsonb,
	"run_id" uuid,
	"event_id" text
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"slug" text NOT NULL,
	"target" jsonb NOT NULL,
	"auth" jsonb NOT NULL,
	"secrets" jsonb NOT NULL,
	"dedupe_header" text,
	"max_body_bytes" integer NOT NULL,
	"response" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_hook_idx" ON "webhook_deliveries" USING btree ("webhook_id","received_at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhooks_tenant_slug_idx" ON "webhooks" USING btree ("tenant_id","slug");