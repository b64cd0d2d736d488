/**
 * The declaration of a keyed /v1 route for the OpenAPI document. Every /v1 route takes a bearer key
 * and may answer the common errors (400, 401, 404): one place says so, and a route file names only
 * its tag, method, path, request and its own responses.
 */
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import { errorResponses } from './schemas';

/** What a /v1 route declares itself: everything but the method and path (arguments), the tag and the security. */
export type V1RouteSpec = Omit<RouteConfig, 'method' | 'path' | 'tags' | 'security'>;

/**
 * The route declarer of one tag: `declare('get', '/v1/…', { operationId, summary, request, responses })`
 * adds the tag, the bearer security and {@link errorResponses}. The route's own responses are laid
 * over the common ones, so its own 400 (a GraphInvalid body, say) replaces the generic one. The
 * members keep the order the document has always had (method, path, tags, security, then the rest
 * as written), so the served document reads the same as when each route spelled them out.
 */
function declarer(tag: string) {
  const tags = [tag];
  const security = [{ bearer: [] }];
  return <M extends RouteConfig['method'], P extends string, R extends V1RouteSpec>(method: M, path: P, spec: R) =>
    createRoute({
      method,
      path,
      tags,
      security,
      ...spec,
      responses: { ...errorResponses, ...spec.responses } as typeof errorResponses & R['responses'],
    });
}

/** The declarers of the document's tags, one per tag: a route cannot name a tag the document does not group by. */
export const v1Route = {
  agents: declarer('agents'),
  audit: declarer('audit'),
  apiKeys: declarer('api-keys'),
  conversations: declarer('conversations'),
  definitions: declarer('definitions'),
  gates: declarer('gates'),
  mcpServers: declarer('mcp-servers'),
  operator: declarer('operator'),
  runs: declarer('runs'),
  schedules: declarer('schedules'),
  session: declarer('session'),
  tools: declarer('tools'),
  waitpoints: declarer('waitpoints'),
  events: declarer('events'),
  webhooks: declarer('webhooks'),
  workers: declarer('workers'),
};
