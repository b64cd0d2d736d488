/**
 * A definition's version aliases: `GET /v1/definitions/{id}/aliases`,
 * `PUT /v1/definitions/{id}/aliases/{name}` (`{version}` or weighted `{targets}`) and
 * `DELETE …/{name}`. `current` is what a start naming no version runs (absent: the latest
 * version); rollback is moving `current`. The rules are libs/graph `aliases`.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { deleteDefinitionAlias, getDefinition, listDefinitionAliases, putDefinitionAlias, type DefinitionAliasRow } from '@flowline/db';
import { ALIAS_NAME_PATTERN, aliasTargetsOf, MAX_ALIAS_TARGETS, type AliasBody } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { NotFoundError, ValidationFailedError } from '../errors';
import { requireUuid } from '../present';
import { ErrorSchema, IdParam, jsonBody, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

const AliasParam = IdParam.extend({
  name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'canary', description: '1–64 of [A-Za-z0-9_-]; `current` is the default alias' }),
});
const Target = z.object({
  version: z.number().int().positive().max(2_147_483_647),
  percent: z.number().positive().max(100).openapi({ description: 'share of the starts through the alias, in percent' }),
});
export const PutAliasBody = z
  .union([
    z.object({ version: z.number().int().positive().max(2_147_483_647).openapi({ description: 'every start through the alias runs this version' }) }).strict(),
    z.object({ targets: z.array(Target).min(1).max(MAX_ALIAS_TARGETS).openapi({ description: 'weighted versions; percents sum to at most 100, the rest falls to `current` (for `current`: to the latest version)' }) }).strict(),
  ])
  .openapi('PutAliasBody');
export const AliasSchema = z
  .object({ name: z.string(), targets: z.array(Target), updatedAt: z.string() })
  .openapi('DefinitionAlias');
const AliasListSchema = z.object({ items: z.array(AliasSchema), nextCursor: z.null() }).openapi('DefinitionAliasList');

// jsonb keeps its own member order: each target is answered as {version, percent}
const present = (a: DefinitionAliasRow) => ({
  name: a.name,
  targets: a.targets.map((t) => ({ version: t.version, percent: t.percent })),
  updatedAt: a.updatedAt.toISOString(),
});

const listRoute = v1Route.definitions('get', '/v1/definitions/{id}/aliases', {
  operationId: 'listDefinitionAliases',
  summary: "List a definition's version aliases",
  description: 'Every alias set on the definition, by name. Without a `current` alias, a start naming no version runs the latest version.',
  request: { params: IdParam },
  responses: { 200: jsonContent(AliasListSchema, 'the aliases, by name (one page)') },
});
const putRoute = v1Route.definitions('put', '/v1/definitions/{id}/aliases/{name}', {
  operationId: 'putDefinitionAlias',
  summary: 'Set a version alias (current, canary, …) of a definition',
  description:
    '`{version}` sends every start through the alias to that version; `{targets: [{version, percent}]}` places that share of ' +
    'the starts on each version (percents summing to at most 100) and the rest on `current` (for `current` itself: on the ' +
    'latest version). A start names an alias with `alias`, or runs `current` when it names neither `version` nor `alias`. ' +
    'Moving `current` is a rollback: it applies to the next start. Every version must be a saved version (400 ValidationFailed).',
  request: { params: AliasParam, body: jsonBody(PutAliasBody) },
  responses: { 200: jsonContent(AliasSchema, 'the alias as set'), 400: jsonContent(ErrorSchema, 'ValidationFailed (details keyed)') },
});
const deleteRoute = v1Route.definitions('delete', '/v1/definitions/{id}/aliases/{name}', {
  operationId: 'deleteDefinitionAlias',
  summary: 'Remove a version alias (removing `current` sends starts to the latest version again)',
  request: { params: AliasParam },
  responses: { 204: { description: 'removed' }, 404: jsonContent(ErrorSchema, 'NotFound: the definition or the alias') },
});

function requireAliasName(name: string): string {
  if (!ALIAS_NAME_PATTERN.test(name)) throw new ValidationFailedError('invalid alias name', [{ key: 'name', message: '1–64 of [A-Za-z0-9_-]' }]);
  return name;
}

/** Registers the alias routes on `app`. */
export function registerDefinitionAliasRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(listRoute, async (c) => {
    const defId = requireUuid(c.req.valid('param').id, 'definition');
    const tenant = c.get('tenant');
    if (!(await getDefinition(deps.pool, tenant, defId))) throw new NotFoundError('definition');
    return sendJson(200, { items: (await listDefinitionAliases(deps.pool, tenant, defId)).map(present), nextCursor: null });
  });

  app.openapi(putRoute, async (c) => {
    const { id, name } = c.req.valid('param');
    const defId = requireUuid(id, 'definition');
    const targets = aliasTargetsOf(c.req.valid('json') as AliasBody);
    if (!targets.ok) throw new ValidationFailedError('invalid alias', targets.issues);
    const res = await putDefinitionAlias(deps.pool, c.get('tenant'), defId, requireAliasName(name), targets.targets);
    if (res.kind === 'definitionNotFound') throw new NotFoundError('definition');
    if (res.kind === 'versionsMissing') {
      throw new ValidationFailedError('no such definition version', res.versions.map((v) => ({ key: 'version', message: `the definition has no version ${v}` })));
    }
    return sendJson(200, present(res.alias));
  });

  app.openapi(deleteRoute, async (c) => {
    const { id, name } = c.req.valid('param');
    const defId = requireUuid(id, 'definition');
    const tenant = c.get('tenant');
    if (!(await getDefinition(deps.pool, tenant, defId))) throw new NotFoundError('definition');
    // a name no alias can have (a NUL, say) names none, and never reaches the database
    if (!ALIAS_NAME_PATTERN.test(name) || !(await deleteDefinitionAlias(deps.pool, tenant, defId, name))) throw new NotFoundError('alias');
    return c.body(null, 204);
  });
}
