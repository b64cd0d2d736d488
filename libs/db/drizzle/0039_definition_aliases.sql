CREATE TABLE "definition_aliases" (
	"definition_id" uuid NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"targets" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "definition_aliases_definition_id_name_pk" PRIMARY KEY("definition_id","name")
);
--> statement-breakpoint
ALTER TABLE "definition_aliases" ADD CONSTRAINT "definition_aliases_definition_id_definitions_id_fk" FOREIGN KEY ("definition_id") REFERENCES "public"."definitions"("id") ON DELETE cascade ON UPDATE no action;