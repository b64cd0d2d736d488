/**
 * Definition routes: CRUD, list, duplicate, validate, render, describe, and the saved
 * versions of a definition (CONTRACT §5).
 */
import { randomUUID } from 'node:crypto';
import type { OpenAPIHono} from '@hono/zod-openapi';
import {
  decodePageCursor,
  decodeVersionCursor,
  DefinitionRefsMissingError,
  definitionVersionPins,
  deleteDefinition,
  existingDefinitionIds,
  duplicateDefinition,
  getDefinition,
  getDefinitionPlanGraph,
  getDefinitionVersion,
  insertDefinition,
  listDefinitions,
  listDefinitionVersions,
  retireDefinitionVersion,
  setDefinitionEnabled,
  savedAgentCatalog,
  updateDefinition,
  type DefinitionPatch,
} from '@flowline/db';
import { agentReferences, definitionReferences, describe, mcpServersOf, toDot, toMermaid, type Graph } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import {
  DefinitionInUseError,
  DefinitionReferencedError,
  GraphInvalidError,
  NotFoundError,
  ValidationFailedError,
  VersionConflictError,
  VersionInUseError,
  VersionIsLatestError,
} from '../errors';
import { bodyMember, jsonText, sendJson } from '../body';
import { checkGraph, graphHash } from '../graph-rules';
import { mcpServersCatalog } from '../mcp-catalog';
import { definition, definitionSummary, definitionVersion, definitionVersionSummary, iso, pageLimit, requireCursor, requireUuid } from '../present';
import {
  CreateDefinitionBody,
  DefinitionListSchema,
  DefinitionSchema,
  DefinitionVersionListSchema,
  DefinitionVersionSchema,
  ErrorSchema,
  GraphDescriptorSchema,
  GraphInvalidSchema,
  IdParam,
  PageQuery,
  RenderQuery,
  RenderSchema,
  UpdateDefinitionBody,
  ValidateBody,
  ValidationSchema,
  VersionParam,
  INT4_MAX,
  jsonContent,
  jsonBody,
} from '../schemas';
import { v1Route } from '../v1-route';
import { auditPatch } from '../audit/middleware';
import { jsonPatch } from '../audit/json-patch';

const isObjectDoc = (doc: unknown): doc is { nodes?: unknown } => doc !== null && typeof doc === 'object';

const createDef = v1Route.definitions('post', '/v1/definitions', {
  operationId: 'createDefinition',
  summary: 'Create a definition from a graph document',
  request: { body: jsonBody(CreateDefinitionBody) },
  responses: { 201: jsonContent(DefinitionSchema, 'created'), 400: jsonContent(GraphInvalidSchema, 'graph invalid or bad body') },
});
const listDefs = v1Route.definitions('get', '/v1/definitions', {
  operationId: 'listDefinitions',
  summary: 'List definitions (without their graphs)',
  request: { query: PageQuery },
  responses: { 200: jsonContent(DefinitionListSchema, 'newest first, no graph') },
});
const getDef = v1Route.definitions('get', '/v1/definitions/{id}', {
  operationId: 'getDefinition',
  summary: 'Get a definition with its graph',
  request: { params: IdParam },
  responses: { 200: jsonContent(DefinitionSchema, 'the definition with its graph') },
});
const putDef = v1Route.definitions('put', '/v1/definitions/{id}', {
  operationId: 'updateDefinition',
  summary: 'Update a definition (optimistic on its version)',
  request: { params: IdParam, body: jsonBody(UpdateDefinitionBody) },
  responses: {
    200: jsonContent(DefinitionSchema, 'updated, version + 1'),
    400: jsonContent(GraphInvalidSchema, 'graph invalid or bad body'),
    409: jsonContent(ErrorSchema, 'VersionConflict'),
  },
});
const deleteDef = v1Route.definitions('delete', '/v1/definitions/{id}', {
  operationId: 'deleteDefinition',
  summary: 'Delete a definition no live run pins and no other definition names',
  request: { params: IdParam },
  responses: {
    204: { description: 'deleted' },
    409: jsonContent(ErrorSchema, 'DefinitionInUse (a live run pins it) or DefinitionReferenced (other definitions name it; details list them)'),
  },
});
const duplicateDef = v1Route.definitions('post', '/v1/definitions/{id}/duplicate', {
  operationId: 'duplicateDefinition',
  summary: 'Copy a definition under a new id',
  request: { params: IdParam },
  responses: { 201: jsonContent(DefinitionSchema, 'the copy, named "<name> (copy)"') },
});
const renderDef = v1Route.definitions('get', '/v1/definitions/{id}/render', {
  operationId: 'renderDefinition',
  summary: "Draw a definition's graph as Mermaid or DOT text",
  description:
    'The current version drawn as a Mermaid flowchart (left to right) or a Graphviz DOT digraph. Node ids are synthetic ' +
    '(n0, n1, … in document order); labels read "<label> (<kind>: <key>)"; an edge shows its label, else its condition, ' +
    'a default edge reads "default" and is dashed. Every label is escaped for its syntax.',
  request: { params: IdParam, query: RenderQuery },
  responses: { 200: jsonContent(RenderSchema, '{ format, text, version }') },
});
const describeDef = v1Route.definitions('get', '/v1/definitions/{id}/describe', {
  operationId: 'describeDefinition',
  summary: "Describe a definition's parsed graph: nodes, edges, analysis",
  description:
    'The current version described: every node with its defaults filled in, lane, in- and out-edges and depth from the ' +
    'Start; every edge with its kind and condition; and an analysis (start, ends, fan-outs, joins, human waits, child runs, ' +
    'routers, topological order, depth, tools used).',
  request: { params: IdParam },
  responses: { 200: jsonContent(GraphDescriptorSchema, 'the graph descriptor') },
});
const listVersions = v1Route.definitions('get', '/v1/definitions/{id}/versions', {
  operationId: 'listDefinitionVersions',
  summary: "List a definition's saved versions (without their graphs)",
  description:
    'Every saved version of the definition, newest first: version 1 at creation, one more per update (a rename too). ' +
    'Deleting the definition removes them. Keyset paged like the other lists.',
  request: { params: IdParam, query: PageQuery },
  responses: { 200: jsonContent(DefinitionVersionListSchema, 'newest first, no graph') },
});
const getVersion = v1Route.definitions('get', '/v1/definitions/{id}/versions/{version}', {
  operationId: 'getDefinitionVersion',
  summary: 'Get one saved version of a definition with its graph, the runs pinned to it and what it needs that is gone',
  description:
    'The name, description and graph document as they were saved at that version (what a run of that version pinned), with the ' +
    'counts of live and parked runs pinned to it, the schedules and aliases naming it, and `unavailable`: what the graph names that ' +
    'is no longer available (tools, MCP servers, saved agents, child definitions), keyed by node. A retired version still answers ' +
    '(history), with `retiredAt`.',
  request: { params: VersionParam },
  responses: { 200: jsonContent(DefinitionVersionSchema, 'the version with its graph') },
});
const retireVersion = v1Route.definitions('delete', '/v1/definitions/{id}/versions/{version}', {
  operationId: 'retireDefinitionVersion',
  summary: 'Retire a saved version no live run, schedule or alias pins',
  description:
    'Retiring hides the version from the version list and refuses it to starts, aliases, schedules, forks and migrations; the row is ' +
    'kept (GET …/versions/{version} and the diff still read it, with `retiredAt`). Refused with 409 VersionInUse while runs that ' +
    'have not ended pin it, a schedule starts runs on it or an alias targets it (details: `{liveRuns, schedules, aliases}`; migrate ' +
    'or finish the runs first), and 409 VersionIsLatest for the latest version. Retiring a retired version answers 204 again.',
  request: { params: VersionParam },
  responses: {
    204: { description: 'retired' },
    409: jsonContent(ErrorSchema, 'VersionInUse (details: liveRuns, schedules, aliases) or VersionIsLatest'),
  },
});
const validateDef = v1Route.definitions('post', '/v1/definitions/validate', {
  operationId: 'validateGraph',
  summary: 'Validate a graph document without saving it',
  request: { body: jsonBody(ValidateBody) },
  responses: { 200: jsonContent(ValidationSchema, 'valid = no errors') },
});
const validateSaved = v1Route.definitions('post', '/v1/definitions/{id}/validate', {
  operationId: 'validateDefinition',
  summary: 'Validate a saved definition as things are now',
  description:
    'Re-validates the current version of a saved definition against the tool catalog, the node cap and the tenant\'s ' +
    'definitions as they are now (a deployment may have dropped a tool since it was saved). Saves nothing.',
  request: { params: IdParam },
  responses: { 200: jsonContent(ValidationSchema, 'valid = no errors') },
});
const enabledRoute = (verb: 'disable' | 'enable') =>
  v1Route.definitions('post', `/v1/definitions/{id}/${verb}`, {
    operationId: `${verb}Definition`,
    summary: verb === 'disable' ? 'Disable a definition: new runs are refused, live runs go on' : 'Enable a disabled definition again',
    description:
      verb === 'disable'
        ? 'While disabled, starting a run of the definition (REST or a conversation send) answers 409 `DefinitionDisabled`; ' +
          'runs already started, replays of their request ids, and child runs of live parents go on. Writes no new version. Idempotent.'
        : 'Starts are accepted again. Idempotent.',
    request: { params: IdParam },
    responses: { 200: jsonContent(DefinitionSchema, 'the definition, `enabled` as set') },
  });

/** A version path parameter: a positive 32-bit integer, anything else names no version (404, before any query). */
function requireVersion(text: string): number {
  const version = /^[1-9]\d{0,9}$/.test(text) ? Number(text) : 0;
  if (version < 1 || version > INT4_MAX) throw new NotFoundError('definition version');
  return version;
}

/** Registers the definition routes on `app`. */
export function registerDefinitionRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;
  const graphOf = (c: { get(k: 'body'): unknown }, required: boolean): unknown => {
    const doc = bodyMember(c, 'graph');
    if (doc === undefined && required) {
      throw new ValidationFailedError('graph is required', [{ key: 'graph', message: 'required' }]);
    }
    return doc;
  };
  /** The graph check with the definitions it names looked up in the tenant (one query for all of them). */
  const check = async (tenant: string, doc: unknown) => {
    const named = definitionReferences(doc);
    const existing = named.length > 0 ? await existingDefinitionIds(pool, tenant, named) : new Set<string>();
    // the MCP servers it names, looked up likewise (their tools are judged at a run start)
    const servers = isObjectDoc(doc) ? mcpServersOf(doc) : [];
    const mcp = servers.length > 0 ? await mcpServersCatalog(pool, deps.mcp, tenant, servers) : { servers: new Set<string>() };
    // and the saved agents its Agent nodes name (a run pins their versions when it starts)
    const agentIds = agentReferences(doc);
    const agents = agentIds.length > 0 ? await savedAgentCatalog(pool, tenant, agentIds) : new Map<string, number>();
    return checkGraph(doc, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog(), existing, mcp, agents);
  };
  const parseOrThrow = async (tenant: string, doc: unknown) => {
    const res = await check(tenant, doc);
    if (!res.ok) throw new GraphInvalidError(res.errors, res.warnings);
    return { graph: res.graph, refs: definitionReferences(res.graph).map((r) => r.toLowerCase()) };
  };
  /** A referenced definition was deleted between the check and the write: answer the check as it reads now. */
  const refsRace = async (tenant: string, doc: unknown, err: unknown): Promise<never> => {
    if (!(err instanceof DefinitionRefsMissingError)) throw err;
    const res = await check(tenant, doc);
    if (!res.ok) throw new GraphInvalidError(res.errors, res.warnings);
    throw err;
  };

  // validate is registered before `{id}` routes so its path never reads as an id
  app.openapi(validateDef, async (c) => {
    const res = await check(c.get('tenant'), graphOf(c, true));
    return sendJson(200, { valid: res.ok, errors: res.ok ? [] : res.errors, warnings: res.warnings });
  });

  app.openapi(createDef, async (c) => {
    const body = c.req.valid('json');
    const doc = graphOf(c, true);
    const tenant = c.get('tenant');
    const { graph, refs } = await parseOrThrow(tenant, doc);
    auditPatch(jsonPatch({}, { name: body.name, description: body.description ?? null, graph: doc }));
    const row = await insertDefinition(pool, {
      createdBy: c.get('principal').id,
      id: randomUUID(),
      tenantId: tenant,
      name: body.name,
      description: body.description ?? null,
      kind: graph.kind,
      graphJson: jsonText(doc),
      planGraphJson: jsonText(graph),
      graphHash: graphHash(doc),
      nodeCount: graph.nodes.length,
      refs,
    }).catch((err: unknown) => refsRace(tenant, doc, err));
    return sendJson(201, definition(row), { location: `/v1/definitions/${row.id}` });
  });

  app.openapi(listDefs, async (c) => {
    const q = c.req.valid('query');
    const page = await listDefinitions(pool, c.get('tenant'), pageLimit(q.limit), requireCursor(q.cursor, decodePageCursor));
    return sendJson(200, { items: page.items.map(definitionSummary), nextCursor: page.nextCursor });
  });

  app.openapi(getDef, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'definition');
    const row = await getDefinition(pool, c.get('tenant'), id);
    if (!row) throw new NotFoundError('definition');
    return sendJson(200, definition(row));
  });

  const planGraphOf = async (c: { get(k: 'tenant'): string }, rawId: string) => {
    const id = requireUuid(rawId, 'definition');
    const found = await getDefinitionPlanGraph(pool, c.get('tenant'), id);
    if (!found) throw new NotFoundError('definition');
    return { version: found.version, graph: found.planGraph as Graph };
  };

  app.openapi(renderDef, async (c) => {
    const { format } = c.req.valid('query');
    const { version, graph } = await planGraphOf(c, c.req.valid('param').id);
    return sendJson(200, { format, text: format === 'dot' ? toDot(graph) : toMermaid(graph), version });
  });

  app.openapi(describeDef, async (c) => {
    const { version, graph } = await planGraphOf(c, c.req.valid('param').id);
    const d = describe(graph);
    return sendJson(200, { schemaVersion: d.schemaVersion, kind: d.kind, version, nodes: d.nodes, edges: d.edges, analysis: d.analysis });
  });

  app.openapi(listVersions, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'definition');
    const q = c.req.valid('query');
    const page = await listDefinitionVersions(pool, c.get('tenant'), id, pageLimit(q.limit), requireCursor(q.cursor, decodeVersionCursor));
    if (!page) throw new NotFoundError('definition');
    return sendJson(200, { items: page.items.map(definitionVersionSummary), nextCursor: page.nextCursor });
  });

  app.openapi(getVersion, async (c) => {
    const params = c.req.valid('param');
    const id = requireUuid(params.id, 'definition');
    const version = requireVersion(params.version);
    const tenant = c.get('tenant');
    const row = await getDefinitionVersion(pool, tenant, id, version);
    const pins = row ? await definitionVersionPins(pool, tenant, id, version) : null;
    if (!row || !pins) throw new NotFoundError('definition version');
    const checked = await check(tenant, row.graph);
    return sendJson(200, {
      ...definitionVersion(row),
      retiredAt: iso(row.retiredAt),
      runs: { live: pins.liveRuns, parked: pins.parkedRuns },
      schedules: pins.schedules,
      aliases: pins.aliases,
      unavailable: checked.ok ? [] : checked.errors,
    });
  });

  app.openapi(retireVersion, async (c) => {
    const params = c.req.valid('param');
    const id = requireUuid(params.id, 'definition');
    const version = requireVersion(params.version);
    const res = await retireDefinitionVersion(pool, c.get('tenant'), id, version);
    if (res.kind === 'notFound') throw new NotFoundError('definition version');
    if (res.kind === 'latest') throw new VersionIsLatestError(res.latest);
    if (res.kind === 'pinned') throw new VersionInUseError(res.pins);
    deps.logger.info({ definitionId: id, version }, 'definition version retired');
    return c.body(null, 204);
  });

  app.openapi(putDef, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'definition');
    const body = c.req.valid('json');
    const patch: DefinitionPatch = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.description !== undefined) patch.description = body.description;
    const doc = graphOf(c, false);
    const tenant = c.get('tenant');
    if (doc !== undefined) {
      const { graph, refs } = await parseOrThrow(tenant, doc);
      patch.refs = refs;
      patch.kind = graph.kind;
      patch.graphJson = jsonText(doc);
      patch.planGraphJson = jsonText(graph);
      patch.graphHash = graphHash(doc);
      patch.nodeCount = graph.nodes.length;
    }
    // the record's diff is taken against the version the update names: any other fails as a conflict
    const before = await getDefinition(pool, tenant, id);
    if (before !== null && before.version === body.version) {
      auditPatch(jsonPatch(
        { name: before.name, description: before.description, graph: before.graph },
        { name: body.name ?? before.name, description: body.description !== undefined ? body.description : before.description, graph: doc ?? before.graph },
      ));
    }
    const res = await updateDefinition(pool, tenant, id, body.version, { ...patch, createdBy: c.get('principal').id }).catch((err: unknown) => refsRace(tenant, doc, err));
    if (res === null) throw new NotFoundError('definition');
    if (res === 'conflict') throw new VersionConflictError(body.version);
    return sendJson(200, definition(res));
  });

  app.openapi(deleteDef, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'definition');
    const res = await deleteDefinition(pool, c.get('tenant'), id);
    if (res === 'notFound') throw new NotFoundError('definition');
    if (res === 'inUse') throw new DefinitionInUseError();
    if (res !== 'deleted') throw new DefinitionReferencedError(res.referencedBy);
    return c.body(null, 204);
  });

  app.openapi(validateSaved, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'definition');
    const tenant = c.get('tenant');
    const row = await getDefinition(pool, tenant, id);
    if (!row) throw new NotFoundError('definition');
    const res = await check(tenant, row.graph);
    return sendJson(200, { valid: res.ok, errors: res.ok ? [] : res.errors, warnings: res.warnings });
  });

  for (const verb of ['disable', 'enable'] as const) {
    app.openapi(enabledRoute(verb), async (c) => {
      const id = requireUuid(c.req.valid('param').id, 'definition');
      auditPatch([{ op: 'replace', path: '/enabled', value: verb === 'enable' }]);
      const row = await setDefinitionEnabled(pool, c.get('tenant'), id, verb === 'enable');
      if (!row) throw new NotFoundError('definition');
      deps.logger.info({ definitionId: id, enabled: row.enabled }, verb === 'enable' ? 'definition enabled' : 'definition disabled');
      return sendJson(200, definition(row));
    });
  }

  app.openapi(duplicateDef, async (c) => {
    const id = requireUuid(c.req.valid('param').id, 'definition');
    const copyName = (name: string) => `${name} (copy)`;
    const source = await getDefinition(pool, c.get('tenant'), id);
    if (source !== null) auditPatch(jsonPatch({}, { name: copyName(source.name), description: source.description, graph: source.graph }));
    const row = await duplicateDefinition(pool, c.get('tenant'), id, randomUUID(), copyName, c.get('principal').id);
    if (!row) throw new NotFoundError('definition');
    return sendJson(201, definition(row), { location: `/v1/definitions/${row.id}` });
  });
}
