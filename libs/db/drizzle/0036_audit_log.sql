CREATE TABLE "audit_chains" (
	"tenant_id" text NOT NULL,
	"head_seq" bigint DEFAULT 0 NOT NULL,
	"head_hash" text DEFAULT '' NOT NULL,
	"pruned_seq" bigint DEFAULT 0 NOT NULL,
	"pruned_hash" text DEFAULT '' NOT NULL,
	"pruned_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"seq" bigint,
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"principal" text NOT NULL,
	"key_prefix" text,
	"action" text NOT NULL,
	"resource_type" text NOT NULL,
	"resource_id" text,
	"request_id" text NOT NULL,
	"client_address" text,
	"status" integer,
	"error_code" text,
	"patch" jsonb,
	"prev_hash" text,
	"hash" text
);
--> statement-breakpoint
CREATE UNIQUE INDEX "audit_chains_tenant_uq" ON "audit_chains" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_tenant_seq_uq" ON "audit_log" USING btree ("tenant_id","seq");--> statement-breakpoint
CREATE INDEX "audit_log_unchained_idx" ON "audit_log" USING btree ("tenant_id","id") WHERE seq is null;--> statement-breakpoint
CREATE INDEX "audit_log_tenant_at_idx" ON "audit_log" USING btree ("tenant_id","at");