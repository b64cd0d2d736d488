CREATE TABLE "agent_steps" (
	"run_id" uuid NOT NULL,
	"node_key" text NOT NULL,
	"step" integer NOT NULL,
	"tenant_id" text NOT NULL,
	"generation" integer NOT NULL,
	"attempt" integer NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"bytes" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_steps_run_id_node_key_step_pk" PRIMARY KEY("run_id","node_key","step"),
	CONSTRAINT "agent_steps_kind_check" CHECK ("agent_steps"."kind" in ('model', 'tool', 'approval', 'steer'))
);
