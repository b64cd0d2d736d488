ALTER TABLE "definitions" ADD COLUMN "refs" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
CREATE INDEX "definitions_refs_idx" ON "definitions" USING gin ("refs");--> statement-breakpoint
-- Backfill from the plaintext parsed graphs (a sealed plan_graph carries no config: its rows keep '{}').
UPDATE "definitions" d SET "refs" = r.refs
FROM (
  SELECT id, array_agg(DISTINCT lower(ref)::uuid) AS refs FROM (
    SELECT id, CASE n->>'kind' WHEN 'Loop' THEN n->'config'->>'body' ELSE n->'config'->>'definitionId' END AS ref
    FROM "definitions",
         jsonb_array_elements(CASE WHEN jsonb_typeof(plan_graph->'nodes') = 'array' THEN plan_graph->'nodes' ELSE '[]'::jsonb END) n
    WHERE n->>'kind' IN ('Subworkflow', 'Loop')
  ) x
  WHERE ref ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
  GROUP BY id
) r
WHERE d.id = r.id;
