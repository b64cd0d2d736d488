CREATE TABLE "run_state_writes" (
	"run_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"tenant_id" text NOT NULL,
	"entries" jsonb NOT NULL,
	CONSTRAINT "run_state_writes_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
