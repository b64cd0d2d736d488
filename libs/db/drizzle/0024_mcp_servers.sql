CREATE TABLE "mcp_servers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"transport" text NOT NULL,
	"headers" jsonb NOT NULL,
	"header_names" text[] DEFAULT '{}'::text[] NOT NULL,
	"allowed_tools" text[],
	"timeout_ms" integer NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_tenant_name_idx" ON "mcp_servers" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE INDEX "mcp_servers_tenant_idx" ON "mcp_servers" USING btree ("tenant_id","id");