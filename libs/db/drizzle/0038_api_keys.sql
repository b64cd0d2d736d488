CREATE TABLE "api_key_secrets" (
	"hash" text PRIMARY KEY NOT NULL,
	"key_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"scopes" text[] NOT NULL,
	"definition_ids" text[],
	"cidrs" text[],
	"owner" text NOT NULL,
	"prefix" text NOT NULL,
	"last_four" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"rotated_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	"last_used_address" text
);
--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "principal" text;--> statement-breakpoint
ALTER TABLE "bulk_jobs" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "api_key_secrets" ADD CONSTRAINT "api_key_secrets_key_id_api_keys_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_key_secrets_key_idx" ON "api_key_secrets" USING btree ("key_id");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id");