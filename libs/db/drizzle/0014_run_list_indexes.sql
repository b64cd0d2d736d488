DROP INDEX "runs_tenant_created_idx";--> statement-breakpoint
DROP INDEX "runs_tenant_status_idx";--> statement-breakpoint
DROP INDEX "runs_tenant_conversation_idx";--> statement-breakpoint
CREATE INDEX "runs_tenant_definition_idx" ON "runs" USING btree ("tenant_id","definition_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_tenant_created_idx" ON "runs" USING btree ("tenant_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_tenant_status_idx" ON "runs" USING btree ("tenant_id","status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "runs_tenant_conversation_idx" ON "runs" USING btree ("tenant_id","conversation_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE conversation_id is not null;