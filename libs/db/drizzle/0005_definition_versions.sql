CREATE TABLE "definition_versions" (
	"definition_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"version" integer NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"kind" text NOT NULL,
	"graph" jsonb NOT NULL,
	"graph_hash" text NOT NULL,
	"node_count" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "definition_versions_definition_id_version_pk" PRIMARY KEY("definition_id","version")
);
--> statement-breakpoint
ALTER TABLE "definition_versions" ADD CONSTRAINT "definition_versions_definition_id_definitions_id_fk" FOREIGN KEY ("definition_id") REFERENCES "public"."definitions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Backfill: the current version of every definition (its graph copied as stored, so a sealed graph stays sealed to <id>@<version>).
INSERT INTO "definition_versions" ("definition_id", "tenant_id", "version", "name", "description", "kind", "graph", "graph_hash", "node_count", "created_at")
SELECT "id", "tenant_id", "version", "name", "description", "kind", "graph", "graph_hash", "node_count", "updated_at" FROM "definitions";
