import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { EVENT_KINDS, FAILURE_CLASSES, NODE_KINDS, NODE_STATUSES, RUN_STATUSES } from '@flowline/graph';
import { ROUTE_SCOPES } from './route-scopes';
import { servedOpenApiDocument, type OpenApiDocument } from './openapi-document';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

function operations(doc: OpenApiDocument) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => ({ route: `${m.toUpperCase()} ${path}`, op: item[m]! })),
  );
}

/**
 * Warnings of the recommended ruleset the document keeps on purpose: the project declares
 * no license, and the keyless ops routes and the sign-in's config and sign-out answer no 4xx.
 */
function allowedWarning(p: { ruleId: string; location: Array<{ pointer?: string }> }): boolean {
  if (p.ruleId === 'info-license') return true;
  const pointer = p.location[0]?.pointer ?? '';
  return p.ruleId === 'operation-4xx-response' && /^#\/paths\/~1(livez|healthz|readyz|metrics|openapi\.json|docs|auth~1config|auth~1logout)\//.test(pointer);
}

describe('the served OpenAPI document', () => {
  it('gives every operation a unique operationId and a summary, so client generators can name its methods', async () => {
    const doc = await servedOpenApiDocument();
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThanOrEqual(Object.keys(ROUTE_SCOPES).length);
    const lacking = ops.filter(({ op }) => !op.operationId || !op.summary?.trim()).map((o) => o.route);
    expect(lacking, 'add `operationId` and `summary` to these routes\' createRoute({...}), then run `npm run docs:gen`').toEqual([]);
    const ids = ops.map(({ op }) => op.operationId);
    expect(new Set(ids).size, `duplicate operationId among ${ids.join(', ')}`).toBe(ids.length);
  });

  it('declares security on every operation: a bearer scope on /v1 routes, none (security: []) on the keyless ops routes', async () => {
    const doc = await servedOpenApiDocument();
    for (const { route, op } of operations(doc)) {
      const path = route.split(' ')[1]!;
      if (path.startsWith('/v1/')) expect(op.security, route).toEqual([{ bearer: [expect.any(String)] }]);
      else expect(op.security, route).toEqual([]);
    }
    expect(doc.servers?.length).toBeGreaterThan(0);
  });

  it('names the closed vocabularies (statuses, failure classes, node and event kinds) as enums taken from the model', async () => {
    const doc = (await servedOpenApiDocument()) as OpenApiDocument & { components: { schemas: Record<string, { enum?: unknown; properties?: Record<string, unknown> }> } };
    const schemas = doc.components.schemas;
    expect(schemas.RunStatus?.enum).toEqual([...RUN_STATUSES]);
    expect(schemas.NodeStatus?.enum).toEqual([...NODE_STATUSES]);
    expect(schemas.FailureClass?.enum).toEqual([...FAILURE_CLASSES]);
    expect(schemas.NodeKind?.enum).toEqual([...NODE_KINDS]);
    expect(schemas.EventKind?.enum).toEqual([...EVENT_KINDS]);
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    expect(schemas.RunSummary?.properties).toMatchObject({ status: ref('RunStatus'), failureClass: ref('FailureClass') });
    expect(schemas.NodeRunSummary?.properties).toMatchObject({ kind: ref('NodeKind'), status: ref('NodeStatus'), failureClass: ref('FailureClass') });
    expect(schemas.NodeRunDetail?.properties).toMatchObject({ kind: ref('NodeKind'), status: ref('NodeStatus'), failureClass: ref('FailureClass') });
  });

  it('documents the fork route (operate scope, its keyed refusals) and the fork links on runs and node runs', async () => {
    const doc = (await servedOpenApiDocument()) as OpenApiDocument & { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
    const op = doc.paths['/v1/runs/{id}/fork']?.post;
    expect(op?.operationId).toBe('forkRun');
    expect(op?.security).toEqual([{ bearer: ['operate'] }]);
    expect(ROUTE_SCOPES['POST /v1/runs/{id}/fork']).toBe('operate');
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['202', '400', '404', '409']));
    for (const code of ['ForkNodeUnknown', 'ForkVersionUnknown', 'ForkNodeNotInVersion', 'ForkUpstreamMismatch', 'ForkOfChildRun']) {
      expect(op?.description).toContain(code);
    }
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.ForkRunBody?.properties ?? {})).toEqual(['fromNodeKey', 'input', 'definitionVersion', 'failedOnly', 'requestId', 'startAt', 'delay']);
    expect(schemas.RunSummary?.properties).toHaveProperty('forkedFrom');
    expect(schemas.NodeRunSummary?.properties).toHaveProperty('reusedFrom');
    expect(schemas.NodeRunDetail?.properties).toHaveProperty('reusedFrom');
  });

  it('describes run budgets (issue #16): budget on start, budget and usage on the run summary, the BudgetExceeded class', async () => {
    const doc = (await servedOpenApiDocument()) as OpenApiDocument & { components: { schemas: Record<string, { enum?: unknown; properties?: Record<string, unknown> }> } };
    const schemas = doc.components.schemas;
    expect(schemas.RunSummary?.properties).toHaveProperty('budget');
    expect(schemas.RunSummary?.properties).toHaveProperty('usage');
    expect(Object.keys(schemas.RunUsage?.properties ?? {})).toEqual(['tokens', 'inputTokens', 'outputTokens', 'costUsd', 'unpricedTokens', 'attempts']);
    expect(Object.keys(schemas.RunBudget?.properties ?? {})).toEqual(['maxTokens', 'maxCostUsd', 'maxWallClockMs', 'maxAttempts']);
    expect(JSON.stringify(doc.paths['/v1/definitions/{id}/runs']?.post)).toContain('BudgetInvalid');
    expect(JSON.stringify(schemas)).toContain('"BudgetExceeded"');
  });

  it('passes the recommended ruleset of the Redocly linter with no error', async () => {
    const doc = await servedOpenApiDocument();
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc, null, 2), absoluteRef: 'openapi.json', config });
    const shown = problems
      .filter((p) => p.severity === 'error' || !allowedWarning(p))
      .map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
    expect(shown).toEqual([]);
  });

  it('generates a TypeScript client (openapi-typescript) that typechecks against typed uses of its routes', async () => {
    const doc = await servedOpenApiDocument();
    const generated = astToString(await openapiTS(doc as never));
    const use = [
      "import type { operations, paths } from './flowline-api';",
      "type RunDetail = paths['/v1/runs/{id}']['get']['responses'][200]['content']['application/json'];",
      "export const status: RunDetail['run']['status'] = 'Completed';",
      "type StartBody = NonNullable<paths['/v1/definitions/{id}/runs']['post']['requestBody']>['content']['application/json'];",
      "export const start: StartBody = { input: { greeting: 'hi' }, requestId: 'r-1' };",
      "type Started = operations['startRun']['responses'][202]['content']['application/json'];",
      "export const started: Started = { runId: '00000000-0000-0000-0000-000000000000' };",
      "type Decide = NonNullable<operations['decideNode']['requestBody']>['content']['application/json'];",
      "export const decide: Decide = { operationId: 'op-1', decision: 'Approve' };",
      "type Fork = NonNullable<operations['forkRun']['requestBody']>['content']['application/json'];",
      "export const fork: Fork = { fromNodeKey: 'f', input: { x: 1 }, definitionVersion: 2 };",
      "type Forked = operations['forkRun']['responses'][202]['content']['application/json'];",
      "export const forked: Forked = { runId: 'r-2', forkedFrom: { runId: 'r-1', nodeKey: 'f' } };",
    ].join('\n');
    const files = new Map([
      ['/gen/flowline-api.ts', generated],
      ['/gen/use.ts', use],
    ]);
    const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [] };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.readFile = (f) => files.get(f) ?? readFile(f);
    host.fileExists = (f) => files.has(f) || fileExists(f);
    host.directoryExists = (d) => d === '/gen' || ts.sys.directoryExists(d);
    host.getSourceFile = (f, lang, ...rest) => {
      const text = files.get(f);
      return text !== undefined ? ts.createSourceFile(f, text, lang) : getSourceFile(f, lang, ...rest);
    };
    const program = ts.createProgram(['/gen/flowline-api.ts', '/gen/use.ts'], options, host);
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  }, 60_000);
});
