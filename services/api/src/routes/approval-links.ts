/**
 * Signed approval links: `POST /w/a/{runId}/{nodeKey}/{principal}/{signature}` decides a policy
 * Pause as that principal, with no key — the signature (waitpoint-links.ts) is the credential,
 * minted for each principal a quorum names and shown on `GET /v1/runs/{id}/nodes/{key}`
 * (`approval.links`). The decision goes through the same policy function as the REST route
 * (approval-decide.ts), recorded with path `link`: a forbidden principal is refused 403 with the
 * rule's name here too, and a second decision 409. A GET of a link never decides anything.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { getRunDetail, runTenantOf } from '@flowline/db';
import { approvalPolicyOf, type JsonObject } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { ApiError, NotFoundError } from '../errors';
import { sendJson } from '../body';
import { requireKey, requireUuid } from '../present';
import { decideByPolicy } from '../approval-decide';
import { DecideAcceptedSchema, ErrorSchema, jsonBody, jsonContent } from '../schemas';
import { verifyApprovalLink } from '../waitpoint-links';
import { auditAs } from '../audit/middleware';
import { waitpointLinksOf } from './waitpoints';
import { checkAct, nodeConfig } from './gates';

/** 403: the link's signature is not this gate's for this principal. */
export class ApprovalLinkInvalidError extends ApiError {
  constructor() {
    super(403, 'ApprovalLinkInvalid', 'the approval link is not signed for this gate and principal');
  }
}

const LinkParam = z.object({
  runId: z.string().openapi({ param: { name: 'runId', in: 'path' }, format: 'uuid' }),
  nodeKey: z.string().openapi({ param: { name: 'nodeKey', in: 'path' } }),
  principal: z.string().openapi({ param: { name: 'principal', in: 'path' } }),
  signature: z.string().openapi({ param: { name: 'signature', in: 'path' } }),
});

const LinkBody = z.object({
  decision: z.enum(['Approve', 'Reject']),
  comment: z.string().max(4000).optional(),
  operationId: z.string().min(1).max(200).optional().openapi({ description: 'idempotency key (default: one per principal, so a repeat replays)' }),
});

const linkRoute = createRoute({
  method: 'post',
  path: '/w/a/{runId}/{nodeKey}/{principal}/{signature}',
  tags: ['gates'],
  security: [],
  operationId: 'decideByApprovalLink',
  summary: "Decide a policy Pause as the principal a signed approval link names (no key)",
  description:
    'Judged by the gate\'s approval policy like POST /v1/runs/{id}/nodes/{key}/decide and recorded with path "link". ' +
    '403 ApprovalLinkInvalid (bad signature) or ApprovalForbidden (error.rule); 409 AlreadyDecided, ApprovalSettled or GateAlreadyDecided. A GET answers 405.',
  request: { params: LinkParam, body: jsonBody(LinkBody) },
  responses: {
    202: jsonContent(DecideAcceptedSchema, 'decision recorded (or the same decision replayed), with the approval\'s progress'),
    403: jsonContent(ErrorSchema, 'ApprovalLinkInvalid or ApprovalForbidden'),
    404: jsonContent(ErrorSchema, 'no such run or node, or the node has no approval policy'),
    409: jsonContent(ErrorSchema, 'AlreadyDecided, ApprovalSettled or GateAlreadyDecided'),
  },
});

/** Registers the approval link routes on `app`. */
export function registerApprovalLinkRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const links = waitpointLinksOf(deps);
  app.openapi(linkRoute, async (c) => {
    const p = c.req.valid('param');
    const runId = requireUuid(p.runId, 'run');
    requireKey(p.nodeKey, 'node');
    if (!verifyApprovalLink(links.key, runId, p.nodeKey, p.principal, p.signature)) throw new ApprovalLinkInvalidError();
    const tenant = await runTenantOf(deps.pool, runId);
    const run = tenant === null ? null : await getRunDetail(deps.pool, tenant, runId);
    if (!run || tenant === null) throw new NotFoundError('run');
    // the signed link names the approver: the row is theirs, in the run's tenant's chain
    auditAs(tenant, p.principal);
    const config = nodeConfig(run.graph, p.nodeKey);
    const policy = approvalPolicyOf(config as JsonObject);
    if (!policy.ok || !policy.policy) throw new NotFoundError('approval');
    const body = c.req.valid('json');
    const act = { operationId: body.operationId ?? `link:${p.principal}`, decision: body.decision, comment: body.comment ?? null, payload: null };
    checkAct('Pause', config, act, 0);
    const decider = { id: p.principal, scopes: [], groups: [] };
    const answer = await decideByPolicy(deps, { tenant, runId, nodeKey: p.nodeKey, policy: policy.policy, act, decider, path: 'link' });
    return sendJson(202, { accepted: true, approval: answer });
  });

  // a link checker or a mail scanner opening the link must not decide
  app.get('/w/a/:runId/:nodeKey/:principal/:signature', (c) => {
    c.header('allow', 'POST');
    return c.json({ error: { code: 'MethodNotAllowed', message: 'POST { decision: "Approve" | "Reject", comment? } to this link to decide; a GET never decides.' } }, 405);
  });
}
