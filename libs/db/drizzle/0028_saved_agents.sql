CREATE TABLE "saved_agent_versions" (
	"agent_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"version" integer NOT NULL,
	"name" text NOT NULL,
	"members" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "saved_agent_versions_agent_id_version_pk" PRIMARY KEY("agent_id","version")
);
--> statement-breakpoint
CREATE TABLE "saved_agents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "agent_pins" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "saved_agent_versions" ADD CONSTRAINT "saved_agent_versions_agent_id_saved_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."saved_agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "saved_agents_tenant_name_idx" ON "saved_agents" USING btree ("tenant_id","name");--> statement-breakpoint
CREATE INDEX "saved_agents_tenant_created_idx" ON "saved_agents" USING btree ("tenant_id","created_at" DESC NULLS LAST,"id");