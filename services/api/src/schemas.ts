/**
 * Request and response schemas of the REST surface (CONTRACT §5, §8). The same zod
 * schemas validate requests and generate `GET /openapi.json`.
 */
import { z } from '@hono/zod-openapi';
import { BLOCKER_KINDS, EVENT_KINDS, FAILURE_CLASSES, NODE_KINDS, NODE_STATUSES, RUN_STATUSES } from '@flowline/graph';

export const RunStatusSchema = z.enum(RUN_STATUSES).openapi('RunStatus');
export const NodeStatusSchema = z.enum(NODE_STATUSES).openapi('NodeStatus');
export const FailureClassSchema = z.enum(FAILURE_CLASSES).openapi('FailureClass');
export const NodeKindSchema = z.enum(NODE_KINDS).openapi('NodeKind');
export const EventKindSchema = z.enum(EVENT_KINDS).openapi('EventKind');

export const IssueSchema = z.object({ key: z.string().nullable(), message: z.string() }).openapi('Issue');

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.unknown()).optional(),
      rule: z.string().optional().openapi({ description: 'ApprovalForbidden: the approval rule that refused (initiator, definitionAuthor, notInQuorum)' }),
    }),
  })
  .openapi('Error');

export const GraphInvalidSchema = z
  .object({
    error: z.object({ code: z.literal('GraphInvalid'), message: z.string(), details: z.array(IssueSchema) }),
    warnings: z.array(IssueSchema),
  })
  .openapi('GraphInvalid');

const GraphDocSchema = z.unknown().openapi({ type: 'object', description: 'graph document (docs/reference/graph.md)' });
export const JsonSchema = z.unknown().openapi({ description: 'any JSON value' });
const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' });

export const IdParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, format: 'uuid' }) });
export const NodeParam = IdParam.extend({
  key: z.string().openapi({ param: { name: 'key', in: 'path' } }),
});

/** Largest value of a Postgres `integer` (versions, sequence numbers): larger numbers are refused at the edge (400). */
export const INT4_MAX = 2_147_483_647;
/** Smallest value of a Postgres `integer`. */
export const INT4_MIN = -2_147_483_648;

/** `limit` (default 50, clamped to 1..200; beyond a 32-bit integer 400) and an opaque `cursor`. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(INT4_MIN).max(INT4_MAX).optional().openapi({ example: 50 }),
  cursor: z.string().optional(),
});

export const DefinitionSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    kind: z.enum(['Standard', 'Chat']),
    version: z.number().int(),
    nodeCount: z.number().int(),
    graphHash: z.string(),
    enabled: z.boolean().openapi({ description: 'false while disabled: starts answer 409 DefinitionDisabled, live runs go on' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('DefinitionSummary');

export const DefinitionSchema = DefinitionSummarySchema.extend({ graph: GraphDocSchema }).openapi('Definition');

/** A keyset page of `item`s: the items and the cursor of the next page (null on the last). */
export function pageSchema<T extends z.ZodTypeAny>(item: T, name: string) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() }).openapi(name);
}

export const DefinitionListSchema = pageSchema(DefinitionSummarySchema, 'DefinitionList');

/** `/v1/definitions/{id}/versions/{version}`: the definition and one of its saved versions. */
export const VersionParam = IdParam.extend({
  version: z.string().openapi({ param: { name: 'version', in: 'path' }, example: '1' }),
});

export const DefinitionVersionSummarySchema = z
  .object({
    definitionId: z.string(),
    version: z.number().int(),
    name: z.string().openapi({ description: 'the name saved with this version' }),
    description: z.string().nullable(),
    kind: z.enum(['Standard', 'Chat']),
    nodeCount: z.number().int(),
    graphHash: z.string(),
    createdAt: Timestamp.openapi({ description: 'when this version was saved' }),
  })
  .openapi('DefinitionVersionSummary');

export const DefinitionVersionSchema = DefinitionVersionSummarySchema.extend({
  graph: GraphDocSchema,
  retiredAt: Timestamp.nullable().openapi({ description: 'when the version was retired (DELETE …/versions/{version}), else null' }),
  runs: z
    .object({
      live: z.number().int().openapi({ description: 'runs pinned to this version that have not ended' }),
      parked: z.number().int().openapi({ description: 'of those, runs with no node Queued or Running (waiting on a person, a wait or a timer)' }),
    })
    .openapi({ description: 'the runs pinned to this version now' }),
  schedules: z.number().int().openapi({ description: 'schedules that start every run on this version' }),
  aliases: z.array(z.string()).openapi({ description: 'aliases with a target on this version' }),
  unavailable: z.array(IssueSchema).openapi({
    description: 'what the version names that is no longer available — a tool not registered, an MCP server (or its tool) gone, a saved agent or child definition deleted — keyed by node; empty when a start of it would be accepted',
  }),
}).openapi('DefinitionVersion');

export const DefinitionVersionListSchema = pageSchema(DefinitionVersionSummarySchema, 'DefinitionVersionList');

export const CreateDefinitionBody = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(4000).nullable().optional(),
  graph: GraphDocSchema,
});

export const UpdateDefinitionBody = z.object({
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(4000).nullable().optional(),
  graph: GraphDocSchema.optional(),
  version: z.number().int().min(1).max(INT4_MAX),
});

export const ValidateBody = z.object({ graph: GraphDocSchema });

export const ValidationSchema = z
  .object({ valid: z.boolean(), errors: z.array(IssueSchema), warnings: z.array(IssueSchema) })
  .openapi('GraphValidation');

/** `GET /v1/definitions/{id}/render`: the diagram syntax. */
export const RenderQuery = z.object({
  format: z.enum(['mermaid', 'dot']).default('mermaid').openapi({ description: 'mermaid (flowchart LR) or dot (Graphviz)', example: 'mermaid' }),
});

export const RenderSchema = z
  .object({ format: z.enum(['mermaid', 'dot']), text: z.string(), version: z.number().int() })
  .openapi('GraphRendering');

const JoinPolicySchema = z.union([z.enum(['All', 'Any', 'First']), z.object({ quorum: z.number().int() })]);
const ConditionSchema = z.object({ path: z.string(), op: z.string(), value: JsonSchema });

export const GraphDescriptorSchema = z
  .object({
    schemaVersion: z.literal(1),
    kind: z.enum(['Standard', 'Chat']),
    version: z.number().int().openapi({ description: 'the definition version described' }),
    nodes: z.array(
      z.object({
        index: z.number().int(),
        key: z.string(),
        kind: NodeKindSchema,
        label: z.string(),
        joinPolicy: JoinPolicySchema,
        maxAttempts: z.number().int(),
        timeoutSeconds: z.number().int().nullable(),
        onError: z.enum(['FailRun', 'Continue']),
        human: z.boolean(),
        inline: z.boolean(),
        child: z.boolean(),
        lane: z.enum(['llm', 'tool']).nullable(),
        inbound: z.array(z.string()),
        outbound: z.array(z.string()),
        depth: z.number().int().nullable().openapi({ description: 'longest path from the Start, in edges' }),
      }),
    ),
    edges: z.array(
      z.object({
        index: z.number().int(),
        key: z.string(),
        from: z.string(),
        to: z.string(),
        label: z.string().nullable(),
        kind: z.enum(['unconditional', 'conditional', 'default']),
        condition: ConditionSchema.nullable(),
      }),
    ),
    analysis: z.object({
      start: z.string().nullable(),
      ends: z.array(z.string()),
      fanOut: z.array(z.string()),
      joins: z.array(z.string()),
      human: z.array(z.string()),
      children: z.array(z.string()),
      routers: z.array(z.string()),
      topologicalOrder: z.array(z.string()),
      depth: z.number().int(),
      tools: z.array(z.string()),
      nodeCount: z.number().int(),
      edgeCount: z.number().int(),
    }),
  })
  .openapi('GraphDescriptor');

/** Run metadata: string key/values, searchable, stored unencrypted. */
export const RunMetadataSchema = z.record(z.string(), z.string()).openapi('RunMetadata', {
  description:
    'string key/values given at start (MAX_RUN_METADATA_KEYS keys, each 1–64 letters, digits, _ - . starting with a letter or digit; values up to ' +
    'MAX_RUN_METADATA_VALUE_CHARS characters). Stored NOT encrypted: they are searchable (GET /v1/runs?metadata=k:v). Kept by a fork, not given to child runs.',
  example: { batch: 'nightly-42', customer: 'acme' },
});
/** A run's priority on start: 1–5, higher first, default 3. */
export const PrioritySchema = z
  .number()
  .int()
  .min(1)
  .max(5)
  .openapi({
    description:
      "the run's priority, 1–5, default 3; HIGHER is more urgent (as in Hatchet; BullMQ's own option runs the other way): " +
      "orders the release of the tenant's held work in the dispatch window and which of its Pending runs take free run slots first; " +
      'first in, first out within a priority; child runs inherit it',
  });

export const StartRunBody = z.object({
  requestId: z.string().min(1).max(200).optional(),
  input: JsonSchema.optional(),
  conversationId: z.string().min(1).max(128).optional(),
  metadata: z.unknown().optional().openapi({ type: 'object', additionalProperties: { type: 'string' }, description: 'run metadata (RunMetadata); a bad key or value answers 400 MetadataInvalid naming it' }),
  budget: JsonSchema.optional().openapi({
    description:
      "this run's budget { maxTokens?, maxCostUsd?, maxWallClockMs?, maxAttempts? }; with the definition's budget, per field the stricter applies. Going past one fails the run BudgetExceeded. A bad one is 400 BudgetInvalid",
    example: { maxTokens: 20000, maxWallClockMs: 300000 },
  }),
  priority: PrioritySchema.optional(),
  startAt: z.string().optional().openapi({
    description: 'a delayed start: the run reads Scheduled (holding no run slot) until this RFC 3339 instant, then starts as an ordinary Pending run. Not with delay',
    example: '2030-01-31T09:00:00Z',
  }),
  delay: z.string().optional().openapi({ description: 'a delayed start counted from now: an ISO-8601 duration (PT10M, P1D). Not with startAt', example: 'PT10M' }),
  version: z.number().int().positive().max(2_147_483_647).optional().openapi({ description: 'a saved version of the definition to run. Not with alias' }),
  alias: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional().openapi({
    description: "a version alias to run through (`canary`, …; its weighted targets place the start, the rest falls to `current`). Default: `current` (absent: the latest version). Not with version",
  }),
});

export const RescheduleBody = z
  .object({
    startAt: z.string().optional().openapi({ description: 'the new earliest start (RFC 3339); one already past releases the run at once', example: '2030-01-31T09:00:00Z' }),
    delay: z.string().optional().openapi({ description: 'the new earliest start counted from now (ISO-8601 duration)', example: 'PT1H' }),
  })
  .openapi('RescheduleRequest');

export const RescheduledSchema = z
  .object({ runId: z.string(), notBefore: Timestamp })
  .openapi('RunRescheduled');

export const RunBudgetSchema = z
  .object({
    maxTokens: z.number().int().positive().optional(),
    maxCostUsd: z.number().nonnegative().optional(),
    maxWallClockMs: z.number().int().positive().optional(),
    maxAttempts: z.number().int().positive().optional(),
  })
  .openapi('RunBudget');

export const RunUsageSchema = z
  .object({
    tokens: z.number().int().openapi({ description: 'inputTokens + outputTokens' }),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costUsd: z.number().openapi({ description: "priced by the dispatcher's MODEL_PRICES (a model without a price costs 0)" }),
    unpricedTokens: z.number().int().openapi({ description: 'tokens of models MODEL_PRICES has no price for (counted in tokens, cost 0)' }),
    attempts: z.number().int().openapi({ description: "node attempts of the run, its ended child runs' included" }),
  })
  .openapi('RunUsage');

export const RunIdSchema = z.object({ runId: z.string() }).openapi('RunAccepted');

export const ForkRunBody = z
  .object({
    fromNodeKey: z.string().min(1).max(64).openapi({ description: 'the node of the run to fork from: it and everything not upstream of it run again' }),
    input: JsonSchema.optional().openapi({ description: "the node's edited input (replaces the `input` member of its input document); for the Start node, the new run input" }),
    definitionVersion: z.number().int().positive().optional().openapi({ description: "a saved version of the run's definition to pin (default: the run's own pinned version)" }),
    failedOnly: z.boolean().optional().openapi({
      description:
        "also keep the node and its descendants where they succeeded (a Parallel fan-out's succeeded branches): only what failed, and what depends on it, runs again; a forked Loop that failed after its first iteration resumes at the failed iteration, keeping the succeeded ones. Not with `input`",
    }),
    requestId: z.string().min(1).max(200).optional(),
    startAt: z.string().optional().openapi({ description: 'a delayed start of the fork (RFC 3339): it reads Scheduled until then. Not with delay' }),
    delay: z.string().optional().openapi({ description: 'a delayed start of the fork counted from now (ISO-8601 duration). Not with startAt' }),
  })
  .openapi('ForkRunBody');

export const ForkAcceptedSchema = z
  .object({ runId: z.string(), forkedFrom: z.object({ runId: z.string(), nodeKey: z.string() }) })
  .openapi('RunForked');

export const RunSummarySchema = z
  .object({
    id: z.string(),
    definitionId: z.string(),
    definitionVersion: z.number().int().openapi({ description: 'the definition version the run pinned (GET /v1/definitions/{id}/versions/{version})' }),
    status: RunStatusSchema,
    failureClass: FailureClassSchema,
    reason: z.string().nullable(),
    paused: z.boolean(),
    requestId: z.string().nullable(),
    parentRunId: z.string().nullable(),
    conversationId: z.string().nullable(),
    createdAt: Timestamp,
    startedAt: Timestamp.nullable(),
    finishedAt: Timestamp.nullable(),
    graphHash: z.string(),
    lastSeq: z.number().int().openapi({
      description:
        "seq of the run's last event when this was read; on GET /v1/runs/{id} the node runs reflect every event up to it (one snapshot), so a live reader replays only events after it",
    }),
    forkedFrom: z
      .object({ runId: z.string(), nodeKey: z.string() })
      .nullable()
      .openapi({ description: 'the run and node this run was forked from (POST /v1/runs/{id}/fork), else null' }),
    metadata: RunMetadataSchema,
    budget: RunBudgetSchema.nullable().openapi({
      description: "the run's effective budget (per field the stricter of the definition's and the start request's), else null",
    }),
    usage: RunUsageSchema.openapi({
      description: "model usage rolled up from the run's LlmCall/Agent/DecisionModel attempts (their output.usage) and its child runs once they ended",
    }),
    priority: z.number().int().min(1).max(5).openapi({ description: "the run's priority, 1–5, higher first (given on start, inherited by child runs and forks)" }),
    notBefore: Timestamp.nullable().openapi({ description: 'a delayed start: the earliest start (the run reads Scheduled until then; kept after it starts), else null' }),
    scheduleId: z.string().nullable().openapi({ description: 'the schedule whose slot started this run (GET /v1/schedules/{id}), else null' }),
  })
  .openapi('RunSummary');

const StringOrList = z.union([z.string(), z.array(z.string())]);

const Q_DESCRIPTION =
  'free text, 1–200 characters: a whole run id matches that run; 4 to 35 characters of a run id as written (hex, hyphens at their places) ' +
  'match the runs whose id starts with them; anything else (or text in double quotes) matches case-insensitively a substring of the ' +
  "definition's name or id, the run's reason or failure class, or a metadata pair as key:value. Text uses no index of its own: it filters " +
  "the tenant's runs newest first until the page is full (narrow it with the other members, createdAfter above all). Bad: 400 keyed q.";

/** The run search members as query parameters; a bad value answers 400 ValidationFailed keyed by its name. */
export const RunSearchQuery = z.object({
  status: StringOrList.optional().openapi({ description: 'one or more run statuses: repeated, or comma-separated (status=Failed,Cancelled)', example: 'Failed' }),
  definitionId: z.string().optional(),
  definitionVersion: z.string().optional().openapi({ description: 'the pinned definition version (positive integer)', example: '2' }),
  failureClass: z.string().optional().openapi({ description: "the run's failure class (FailureClass)", example: 'Timeout' }),
  metadata: StringOrList.optional().openapi({ description: 'metadata pairs key:value, repeated; each must be on the run (containment)', example: 'batch:nightly-42' }),
  createdAfter: z.string().optional().openapi({ description: 'RFC 3339; created at or after', format: 'date-time' }),
  createdBefore: z.string().optional().openapi({ description: 'RFC 3339; created strictly before', format: 'date-time' }),
  finishedAfter: z.string().optional().openapi({ description: 'RFC 3339; finished at or after (unfinished runs never match)', format: 'date-time' }),
  finishedBefore: z.string().optional().openapi({ description: 'RFC 3339; finished strictly before (unfinished runs never match)', format: 'date-time' }),
  conversationId: z
    .string()
    .optional()
    .openapi({ description: 'only runs bound to this conversation (client-chosen id, 1–128 characters)' }),
  q: z.string().optional().openapi({ description: Q_DESCRIPTION, example: '3f2a91c0' }),
});

export const RunListQuery = PageQuery.merge(RunSearchQuery);

/** The filter of a bulk action: the run search members as JSON. */
export const RunSearchFilter = z
  .object({
    status: z.union([RunStatusSchema, z.array(RunStatusSchema)]).optional(),
    definitionId: z.string().optional(),
    definitionVersion: z.number().int().positive().optional(),
    failureClass: FailureClassSchema.optional(),
    metadata: RunMetadataSchema.optional(),
    createdAfter: Timestamp.optional(),
    createdBefore: Timestamp.optional(),
    finishedAfter: Timestamp.optional(),
    finishedBefore: Timestamp.optional(),
    conversationId: z.string().optional(),
    q: z.string().optional().openapi({ description: Q_DESCRIPTION }),
  })
  // strict: a misspelt member is refused, never dropped (it would widen the action)
  .strict()
  .openapi('RunSearchFilter', { description: 'run search members, ANDed; at least one. Ranges are half-open (…After inclusive, …Before exclusive).' });

export const BulkBody = z
  .object({
    action: z.enum(['cancel', 'retry-failed', 'resume', 'fork', 'migrate']).openapi({
      description:
        'cancel: live runs (the cancel intent); retry-failed: Failed runs (a retry of each Failed node); resume: paused live runs; fork: top-level runs (a new run each, from fromNodeKey); migrate: live runs of filter.definitionId, each moved to toVersion when its plan is compatible (as POST /v1/runs/{id}/migrate)',
    }),
    filter: RunSearchFilter,
    dryRun: z.boolean().optional().openapi({ description: 'answer 200 {count} without writing anything' }),
    requestId: z.string().min(1).max(200).optional(),
    fromNodeKey: z.string().optional().openapi({ description: 'fork only: the node to fork each run from' }),
    failedOnly: z.boolean().optional().openapi({ description: 'fork only: as POST /v1/runs/{id}/fork' }),
    toVersion: z.number().optional().openapi({ description: "migrate only: the definition's latest version, which every run moves to" }),
    nodeMap: z.record(z.string(), z.string()).optional().openapi({ description: 'migrate only: old node key → new node key, for every run (as POST /v1/runs/{id}/migrate)' }),
    canaryPercent: z.number().optional().openapi({ description: "migrate only: migrate this share (0–100, exclusive) of the job's runs first, then pause until POST /v1/bulk-jobs/{bulkId}/resume" }),
    maxErrorRate: z.number().optional().openapi({
      description: 'migrate only: pause when the share of runs that failed to migrate since the last resume exceeds this (0 ≤ r < 1), once BULK_ERROR_RATE_MIN_RUNS were processed',
    }),
  })
  .openapi('BulkActionBody');

export const BulkDryRunSchema = z.object({ count: z.number().int() }).openapi('BulkDryRun');
export const BulkAcceptedSchema = z.object({ bulkId: z.string(), count: z.number().int() }).openapi('BulkAccepted');
export const BulkJobSchema = z
  .object({
    bulkId: z.string(),
    action: z.string(),
    status: z.enum(['Pending', 'Running', 'Paused', 'Completed', 'Failed']),
    pauseReason: z.enum(['canary', 'errorRate']).nullable().openapi({ description: 'why a Paused migrate stopped: its canary share is done, or its error rate was exceeded' }),
    migrate: z
      .object({ toVersion: z.number().int(), nodeMap: z.record(z.string(), z.string()), canaryPercent: z.number().nullable(), maxErrorRate: z.number().nullable() })
      .nullable()
      .openapi({ description: "a migrate's options, else null" }),
    total: z.number().int().openapi({ description: 'runs the job applies to, fixed at submission (the dry run count)' }),
    done: z.number().int().openapi({ description: 'runs the verb was applied to, or that had nothing left to do' }),
    failed: z.number().int().openapi({ description: 'runs the verb was refused on (the run changed since submission)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('BulkJob');
export const BulkJobRunSchema = z
  .object({
    runId: z.string(),
    outcome: z.enum(['applied', 'noop', 'refused']),
    reason: z.string().nullable().openapi({ description: 'a refusal\'s code (a migrate: needsMapping | incompatible | VersionNotLatest …), else null' }),
    details: z
      .array(z.object({ code: z.string(), nodeKey: z.string().nullable(), message: z.string() }))
      .nullable()
      .openapi({ description: "a refused migrate's planner reasons, else null" }),
  })
  .openapi('BulkJobRun');
export const BulkJobRunListSchema = pageSchema(BulkJobRunSchema, 'BulkJobRunList');
export const BulkJobRunsQuery = PageQuery.extend({
  outcome: z.enum(['applied', 'noop', 'refused']).optional().openapi({ description: 'only the runs with this outcome' }),
});
export const BulkIdParam = z.object({ bulkId: z.string().openapi({ param: { name: 'bulkId', in: 'path' }, format: 'uuid' }) });

export const RunListSchema = pageSchema(RunSummarySchema, 'RunList');

/** The members a node run's summary and its detail both open with. */
const nodeRunHeadMembers = {
  nodeKey: z.string(),
  kind: NodeKindSchema,
  status: NodeStatusSchema,
  attempt: z.number().int(),
  failureClass: FailureClassSchema,
  reason: z.string().nullable(),
  pendingDecisionKind: z.string().nullable(),
};

export const NodeRunSummarySchema = z
  .object({
    ...nodeRunHeadMembers,
    childRunId: z.string().nullable(),
    startedAt: Timestamp.nullable(),
    finishedAt: Timestamp.nullable(),
    reusedFrom: z
      .string()
      .nullable()
      .openapi({ description: 'in a forked run: the source run this node run was copied from (reused, not run here), else null' }),
  })
  .openapi('NodeRunSummary');

/** A run start that waited (`?wait=`) and saw the run end: its summary and output. */
export const RunResultSchema = z
  .object({ runId: z.string(), run: RunSummarySchema, output: z.unknown().nullable().openapi({ description: '{ outcome, result } of a Completed run, else null' }) })
  .openapi('RunResult');

export const RunDetailSchema = z
  .object({ run: RunSummarySchema, nodeRuns: z.array(NodeRunSummarySchema), output: JsonSchema, graph: GraphDocSchema })
  .openapi('RunDetail');

export const SteerEntrySchema = z.object({
  operationId: z.string(),
  message: z.string(),
  atUtc: Timestamp,
  attempt: z.number().int(),
  applied: z.boolean(),
});

export const NodeRunDetailSchema = z
  .object({
    ...nodeRunHeadMembers,
    input: JsonSchema,
    output: JsonSchema,
    error: z.object({ class: FailureClassSchema, reason: z.string().nullable() }).nullable(),
    steering: z.array(SteerEntrySchema),
    childRunId: z.string().nullable(),
    notBefore: Timestamp.nullable(),
    reusedFrom: z.string().nullable().openapi({ description: 'in a forked run: the source run this node run was copied from, else null' }),
    waitpoints: z
      .array(z.object({ id: z.string(), index: z.number().int(), status: z.enum(['waiting', 'completed', 'expired', 'revoked']), expiresAt: Timestamp, callbackUrl: z.string() }))
      .optional()
      .openapi({ description: 'a parked Wait: its waiting tokens with their signed callback URLs (absent for other nodes)' }),
    pendingToolCall: z
      .object({
        step: z.number().int().openapi({ description: "the Agent's transcript step that asks" }),
        tool: z.string().openapi({ description: 'the tool as the Agent names it (a catalog tool or mcp:SERVER/TOOL)' }),
        arguments: z.record(z.string(), JsonSchema).openapi({ description: 'the arguments the model gave; decide Approve with payload.arguments runs it with others' }),
        inputSchema: z.record(z.string(), JsonSchema).nullable().openapi({ description: "the tool's input schema edited arguments must match, when it declares one" }),
      })
      .nullable()
      .optional()
      .openapi({ description: "an Agent parked on a tool call (pendingDecisionKind ToolCall): the call it asks a person about; absent for other nodes" }),
  })
  .openapi('NodeRunDetail');

export const EventsQuery = z.object({
  afterSeq: z.coerce.number().int().min(0).max(INT4_MAX).optional(),
  limit: z.coerce.number().int().min(INT4_MIN).max(INT4_MAX).optional(),
});

/** `GET /v1/runs/{id}/state` query. */
export const RunStateQuery = z.object({
  atSeq: z.coerce.number().int().min(0).max(INT4_MAX).optional(),
});

export const RunStateSchema = z
  .object({
    state: z.record(z.string(), JsonSchema),
    seq: z.number().int(),
  })
  .openapi('RunState');

export const EventSchema = z
  .object({ seq: z.number().int(), kind: EventKindSchema, nodeKey: z.string().nullable(), at: Timestamp, detail: JsonSchema })
  .openapi('RunEvent');

export const EventPageSchema = z
  .object({ events: z.array(EventSchema), limit: z.number().int(), truncated: z.boolean() })
  .openapi('EventPage');

export const CancelBody = z.object({ reason: z.string().max(1000).optional() });

export const DecideBody = z.object({
  operationId: z.string().min(1).max(200),
  decision: z.enum(['Approve', 'Reject', 'Answer']),
  comment: z.string().max(4000).nullable().optional(),
  payload: JsonSchema.optional(),
});

export const AcceptedSchema = z.object({ accepted: z.literal(true) }).openapi('Accepted');

export const ApprovalProgressSchema = z
  .object({
    status: z.enum(['pending', 'approved', 'rejected']),
    quorums: z.array(
      z.object({
        name: z.string(), min: z.number().int(), approvals: z.number().int(), rejections: z.number().int(), met: z.boolean(),
        addedAt: z.number().optional().openapi({ description: 'an escalation quorum: when it joined (epoch ms)' }),
      }),
    ),
  })
  .openapi('ApprovalProgress');

export const DecideAcceptedSchema = z
  .object({
    accepted: z.literal(true),
    approval: ApprovalProgressSchema.optional().openapi({ description: "a Pause with an approval policy: the policy's standing after this decision" }),
  })
  .openapi('DecideAccepted');

export const SignalBody = z.object({
  channel: z.string().min(1).max(64).openapi({ description: "a channel the run's graph declares (graph member signals)" }),
  payload: JsonSchema.optional().openapi({ description: "any JSON (null when absent), checked against the channel's schema" }),
  requestId: z.string().min(1).max(200).openapi({ description: 'idempotency key: the same requestId again answers the first signal' }),
});

export const WaitpointStatusSchema = z.enum(['waiting', 'completed', 'expired', 'revoked']).openapi('WaitpointStatus');

export const WaitpointSchema = z
  .object({
    id: z.string(),
    runId: z.string(),
    nodeKey: z.string(),
    index: z.number().int().openapi({ description: "the token arm's place in the Wait config (0 for a plain Wait)" }),
    status: WaitpointStatusSchema.openapi({ description: 'expired also for a token past its expiry that its Wait has not settled yet' }),
    singleUse: z.boolean(),
    schema: JsonSchema.openapi({ description: "the JSON Schema the completion's payload must meet, or null" }),
    payload: JsonSchema.openapi({ description: 'the completion body, null until completed' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    completedAt: Timestamp.nullable().openapi({ description: 'when it was completed or revoked' }),
    callbackUrl: z.string().openapi({ description: 'POST /w/{tokenId}/{signature}: HMAC-signed, no key needed' }),
  })
  .openapi('Waitpoint');

export const WaitpointListSchema = pageSchema(WaitpointSchema, 'WaitpointList');

export const WaitpointListQuery = PageQuery.extend({
  runId: z.string().optional().openapi({ format: 'uuid' }),
  status: WaitpointStatusSchema.optional(),
});

export const WaitpointCompleteBody = z.object({ payload: JsonSchema.optional().openapi({ description: "any JSON (null when absent), checked against the token's schema" }) });

export const WaitpointCompletedSchema = z
  .object({
    completed: z.boolean().openapi({ description: 'true: this request completed it' }),
    alreadyCompleted: z.boolean().openapi({ description: 'true: it was completed before; nothing changed' }),
    waitpoint: WaitpointSchema,
  })
  .openapi('WaitpointCompleted');

export const CallbackParam = z.object({
  tokenId: z.string().openapi({ param: { name: 'tokenId', in: 'path' }, format: 'uuid' }),
  signature: z.string().openapi({ param: { name: 'signature', in: 'path' } }),
});

export const CallbackAnswerSchema = z
  .object({ completed: z.boolean(), alreadyCompleted: z.boolean(), waitpointId: z.string() })
  .openapi('WaitpointCallbackAnswer');

export const InboundEventSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/).openapi({ example: 'payment.settled', description: '1–128 of A-Z a-z 0-9 _ . : / -' }),
  data: JsonSchema.optional().openapi({ description: 'any JSON (null when absent): a Wait event arm takes it as its payload' }),
  id: z.string().min(1).max(200).optional().openapi({ description: 'dedupe key per tenant: an id already sent is not kept again' }),
  ts: Timestamp.optional().openapi({ description: "the sender's time, kept as given" }),
});

export const EventsAcceptedSchema = z
  .object({
    accepted: z.number().int().openapi({ description: 'events kept anew' }),
    ids: z.array(z.string()).openapi({ description: 'the id of each event, in order (generated when not given)' }),
    duplicates: z.array(z.string()).openapi({ description: 'ids already sent before (not kept again)' }),
  })
  .openapi('EventsAccepted');

const EventUuid = z.string().openapi({ format: 'uuid' });

/** An event's id in a path: the sender's id, any string the intake kept. */
export const EventIdParam = z.object({ id: z.string().min(1).max(200).openapi({ param: { name: 'id', in: 'path' } }) });

export const EventMatchSchema = z
  .object({
    definitionId: EventUuid,
    definitionName: z.string().nullable().openapi({ description: 'null once the definition is deleted' }),
    outcome: z.enum(['matched', 'notMatched', 'filterError', 'deferred', 'refused']).openapi({
      description:
        'matched: a run was started (runId); notMatched: no trigger of the definition took the event (reason); filterError: a filter could not ' +
        'be judged on the data (reason); deferred: the start was refused for now (backlog full) and is retried; refused: the start was refused for good (reason)',
    }),
    reason: z.string().nullable(),
    runId: EventUuid.nullable(),
    at: Timestamp,
  })
  .openapi('EventMatch');

export const EventDetailSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    data: JsonSchema,
    ts: Timestamp.nullable(),
    receivedAt: Timestamp,
    fanout: z.enum(['done', 'due']).openapi({ description: "due: some subscriber's verdict or run start is still to come (the fan-out sweep finishes it)" }),
    matches: z.array(EventMatchSchema).openapi({ description: 'what each definition subscribed to the name made of the event' }),
  })
  .openapi('EventDetail');

/** `GET /v1/events` query: a name, a received_at window, a page. */
export const EventListQuery = PageQuery.extend({
  name: z.string().min(1).max(128).optional().openapi({ description: 'only events of this exact name' }),
  from: z.string().optional().openapi({ format: 'date-time', description: 'received at or after this instant' }),
  to: z.string().optional().openapi({ format: 'date-time', description: 'received before this instant' }),
});

export const EventListItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    ts: Timestamp.nullable(),
    receivedAt: Timestamp,
    fanout: z.enum(['done', 'due']),
    outcomes: z
      .record(z.enum(['matched', 'notMatched', 'filterError', 'deferred', 'refused']), z.number().int())
      .openapi({ description: 'how many subscribers gave each verdict so far (verdicts none gave are absent); the detail names them' }),
  })
  .openapi('EventListItem');

export const EventListSchema = z
  .object({ items: z.array(EventListItemSchema), nextCursor: z.string().nullable() })
  .openapi('EventList');

export const EventReplayBody = z
  .object({
    definitionIds: z.array(z.string()).max(100).optional().openapi({
      description: "only these definitions (each judged even when it was published after the event); absent: every definition listening for the event's name now",
    }),
  })
  .openapi('EventReplay');

export const EventReplaySchema = z
  .object({ matches: z.array(EventMatchSchema.omit({ definitionName: true, at: true })) })
  .openapi('EventReplayed');

export const SignalAcceptedSchema = z
  .object({ accepted: z.literal(true), signalId: z.string(), duplicate: z.boolean() })
  .openapi('SignalAccepted');

export const ToolListSchema = z
  .object({
    items: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        argumentsSchema: JsonSchema,
        requiresAllowedUrls: z.boolean(),
      }),
    ),
    nextCursor: z.null(),
  })
  .openapi('ToolList');

/** A JSON response entry for `createRoute`. */
export function jsonContent<T>(schema: T, description: string) {
  return { content: { 'application/json': { schema } }, description };
}

/** A JSON request body of `schema`. */
export function jsonBody<T>(schema: T, required = true) {
  return { content: { 'application/json': { schema } }, required };
}

/** The `Idempotency-Key` header a route that starts something takes in place of a body `requestId`. */
export const IdempotencyKeyHeaders = z.object({ 'idempotency-key': z.string().min(1).max(200).optional() });

/** The 429 of a route that starts runs: the tenant's Pending backlog is full, or a rate limit refused it. */
export function backlogFullResponse(retrying: 'starting' | 'sending') {
  return {
    description:
      "BacklogFull: the tenant already has MAX_PENDING_RUNS Pending runs (an addition to CONTRACT §5, so one tenant cannot pile up unbounded waiting work); retry after `Retry-After` seconds. Also RateLimited when rate limits are on",
    headers: z.object({ 'Retry-After': z.string().openapi({ description: `seconds to wait before ${retrying} again` }) }),
    content: { 'application/json': { schema: ErrorSchema } },
  };
}

/** The error responses every /v1 route may give. */
export const errorResponses = {
  400: jsonContent(ErrorSchema, 'bad request'),
  401: jsonContent(ErrorSchema, 'missing or unknown API key'),
  404: jsonContent(ErrorSchema, 'not found (or another tenant’s)'),
};

// ---------------------------------------------------------------- operator verbs (routes/operator.ts)

export const EdgeParam = IdParam.extend({
  edgeKey: z.string().openapi({ param: { name: 'edgeKey', in: 'path' } }),
});

export const SteerBody = z.object({
  operationId: z.string().min(1).max(200),
  message: z.string().min(1).max(8000),
});

export const StepBody = z
  .object({ mode: z.enum(['one', 'wave', 'node']), nodeKey: z.string().min(1).max(64).optional() })
  .refine((b) => (b.mode === 'node') === (b.nodeKey !== undefined), {
    message: 'nodeKey is required with mode "node" and only then',
    path: ['nodeKey'],
  });

export const StepAcceptedSchema = z
  .object({ accepted: z.literal(true), stepId: z.string(), coalesced: z.boolean() })
  .openapi('StepAccepted');

export const BreakpointsBody = z.object({ nodeKeys: z.array(z.string()).max(1000) });

export const BreakpointsSchema = z.object({ nodeKeys: z.array(z.string()) }).openapi('Breakpoints');

export const EdgeOverrideBody = z.object({ verdict: z.boolean().nullable() });

export const RunControlsSchema = z
  .object({
    paused: z.boolean(),
    breakpoints: z.array(z.string()).openapi({ description: 'node keys admission stops before' }),
    edgeOverrides: z.record(z.string(), z.boolean()).openapi({ description: 'edge key → forced verdict' }),
    step: z
      .object({ mode: z.enum(['one', 'wave', 'node']), nodeKey: z.string().nullable() })
      .nullable()
      .openapi({ description: 'the one-shot step allowance not consumed yet, if any' }),
  })
  .openapi('RunControls');

export const EdgeOverrideSchema = z
  .object({ edgeKey: z.string(), verdict: z.boolean().nullable() })
  .openapi('EdgeOverride');

export const CompleteBody = z.object({ output: JsonSchema });

export const SkipBody = z
  .object({
    prune: z.boolean().optional().openapi({
      description: 'true: the node\'s out-edges die and what only it feeds is skipped with it; absent/false: declared not taken, its dependents proceed',
    }),
  })
  .openapi('SkipRequest');

export const NodeInputBody = z.object({ input: JsonSchema });

export const NodeInputSchema = z.object({ nodeKey: z.string(), input: JsonSchema }).openapi('NodeInputOverride');

export const BlockerKindSchema = z.enum(BLOCKER_KINDS).openapi('BlockerKind');

export const BlockerSchema = z
  .object({
    nodeKey: z.string(),
    status: NodeStatusSchema,
    kind: BlockerKindSchema,
    since: Timestamp.nullable().openapi({ description: 'since when it waits for this, when known' }),
    details: z.record(z.string(), z.unknown()).openapi({
      description:
        'kind-specific: waitingOn (upstream/join/heldDecision), joinPolicy/satisfied/needed (join), live/limit/ahead (runSlot), key/value/live/limit/ahead (concurrencyKey), ' +
        'until (timer), channel (signal), waitpointId/callbackUrl/until (token), event (event), mode/arms/until (wait: a composite Wait), lane/invocationId/position/depth/deadlineAt (laneBacklog/admission/worker/cancelDrain), ' +
        "missing (unavailable: what the node names that is gone), childRunId/childStatus (child), decisionKind/scope, and tool/arguments for an Agent's tool call (gate), shard/owner/expiresAt (shardOwner), reason (tick), " +
        'budget/limit/spent/reason (budgetExhausted), parallel/maxConcurrency/working (branchPlace); times ISO 8601',
    }),
  })
  .openapi('Blocker');

export const RunBlockersSchema = z
  .object({
    runId: z.string(),
    status: RunStatusSchema,
    at: Timestamp.openapi({ description: 'when the answer was read (database clock)' }),
    blockers: z
      .array(BlockerSchema)
      .openapi({ description: 'one per non-terminal node, document order; empty for a finished run unless a spent budget failed it (budgetExhausted)' }),
  })
  .openapi('RunBlockers');
