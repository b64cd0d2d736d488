/**
 * `GET /v1/definitions/{id}/diff?from=6&to=7`: what changed between two saved versions of a
 * definition, computed by the pure `diffGraphs` (libs/graph) over both versions' parsed graphs.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { getDefinition, getDefinitionVersion } from '@flowline/db';
import { diffGraphs, NODE_KINDS, type Graph } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { ApiError, GraphInvalidError, NotFoundError } from '../errors';
import { checkStoredGraph } from '../graph-rules';
import { requireUuid } from '../present';
import { IdParam, ErrorSchema, JsonSchema, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

const INT4_MAX = 2_147_483_647;
const versionNumber = (which: string) =>
  z.coerce.number().int().positive().max(INT4_MAX).openapi({ description: `the ${which} version`, example: which === 'older' ? 6 : 7 });

export const DiffQuery = z.object({ from: versionNumber('older'), to: versionNumber('newer') });

const Change = z.object({ member: z.string().openapi({ description: 'dot path of the member: `maxAttempts`, `config.prompt`, `condition`, `state.reducers`' }), from: JsonSchema, to: JsonSchema });
const SchemaChange = z.object({ changed: z.boolean(), from: JsonSchema, to: JsonSchema });
const NodeRef = z.object({ key: z.string(), kind: z.enum(NODE_KINDS) });
const EdgeRef = z.object({ key: z.string(), from: z.string(), to: z.string() });

export const DefinitionDiffSchema = z
  .object({
    definitionId: z.string(),
    from: z.number().int(),
    to: z.number().int(),
    identical: z.boolean(),
    nodes: z.object({
      added: z.array(NodeRef),
      removed: z.array(NodeRef),
      changed: z.array(NodeRef.extend({ changes: z.array(Change) })),
    }),
    edges: z.object({
      added: z.array(EdgeRef),
      removed: z.array(EdgeRef),
      changed: z.array(z.object({ key: z.string(), changes: z.array(Change) })),
    }),
    inputSchema: SchemaChange.openapi({ description: "the run input's schema (graph `inputSchema`)" }),
    stateSchema: SchemaChange.openapi({ description: "the run state's schema (graph `state.schema`)" }),
    graph: z.array(Change).openapi({ description: 'every other graph-level member that differs' }),
  })
  .openapi('DefinitionDiff');

/** 404 naming which of the two versions the definition never had. */
class DiffVersionNotFoundError extends ApiError {
  constructor(member: 'from' | 'to', version: number) {
    super(404, 'NotFound', `definition version ${version} not found`, [{ key: member, message: 'no saved version of this definition' }]);
  }
}

const diffRoute = v1Route.definitions('get', '/v1/definitions/{id}/diff', {
  operationId: 'diffDefinitionVersions',
  summary: 'What changed between two saved versions of a definition',
  description:
    'Nodes and edges added, removed and changed member by member (over the parsed graphs: a member written out with its ' +
    'default is no change; a node\'s config one member deep, `config.prompt`), the run input and state schema changes, and ' +
    'any other graph-level member that differs. Keys are identities: a renamed node is one removed and one added. ' +
    '`from` may be newer than `to` (the difference reads the other way).',
  request: { params: IdParam, query: DiffQuery },
  responses: {
    200: jsonContent(DefinitionDiffSchema, 'the difference from `from` to `to`'),
    404: jsonContent(ErrorSchema, 'NotFound: the definition, or a version (details name `from` or `to`)'),
  },
});

/** Registers the diff route on `app`. */
export function registerDefinitionDiffRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(diffRoute, async (c) => {
    const defId = requireUuid(c.req.valid('param').id, 'definition');
    const { from, to } = c.req.valid('query');
    const tenant = c.get('tenant');
    if (!(await getDefinition(deps.pool, tenant, defId))) throw new NotFoundError('definition');
    const graphOf = async (member: 'from' | 'to', version: number): Promise<Graph> => {
      const v = await getDefinitionVersion(deps.pool, tenant, defId, version);
      if (!v) throw new DiffVersionNotFoundError(member, version);
      const parsed = checkStoredGraph(v.graph, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog());
      if (!parsed.ok) throw new GraphInvalidError(parsed.errors, parsed.warnings);
      return parsed.graph;
    };
    const [a, b] = [await graphOf('from', from), await graphOf('to', to)];
    return sendJson(200, { definitionId: defId, from, to, ...diffGraphs(a, b) });
  });
}
