/** What a node executor is handed by the worker: the item, its signal and the IO it may use. */
import type { Logger } from 'pino';
import type { AgentReference, TemplateLimits, WorkItem } from '@flowline/graph';
import type { McpToolbox, ToolRegistry } from '@flowline/tools';
import type { AttachmentSettings } from '../attachment-resolver';
import type { AgentStepStore } from './agent-transcript';
import type { ModelTarget } from '../providers/registry';
import type { LlmRequest, LlmResponse } from '../providers/types';

export interface NodeContext {
  item: WorkItem;
  /** fires on deadline, cancellation or shutdown */
  signal: AbortSignal;
  /** MAX_RUN_INPUT_BYTES: budget of each data block inlined into a prompt */
  maxInputBytes: number;
  /** MAX_TEMPLATE_OUTPUT_BYTES and TEMPLATE_RENDER_LIMIT_MS: bounds of each rendered template */
  templates: TemplateLimits;
  /** ATTACHMENT_RESOLVER_MODULE and MAX_ATTACHMENT_TEXT_BYTES (`includeAttachments`) */
  attachments: AttachmentSettings;
  /** the provider and model a node's `model` pin resolves to */
  resolveModel(pin: string | null | undefined): Promise<ModelTarget>;
  /** one model call: waits for provider admission, streams deltas to the activity feed */
  call(target: ModelTarget, request: Omit<LlmRequest, 'model'>): Promise<LlmResponse>;
  /** the read-only tool registry (Agent) */
  tools: ToolRegistry;
  /** MCP tools (Agent `mcp:` tools): the toolbox and the tenant of a run; absent = none can be offered */
  mcp?: { toolbox: McpToolbox; tenantOf(runId: string): Promise<string | null> } | undefined;
  /**
   * The saved agent (`config.agentDefinitionId`) a run's Agent node pinned when the run started;
   * null when it no longer exists. Absent: this worker reads no saved agents.
   */
  savedAgent?: ((runId: string, nodeKey: string, ref: AgentReference) => Promise<SavedAgentPin | null>) | undefined;
  /** a `phase` entry on the activity feed */
  phase(text: string): void;
  /** a `toolCall` entry on the activity feed */
  toolActivity(text: string): void;
  logger: Logger;
  /** where an Agent's transcript is checkpointed */
  agentSteps: AgentStepStore;
  /** MAX_AGENT_TRANSCRIPT_BYTES */
  maxTranscriptBytes: number;
}

/** A saved agent's pinned version, as an Agent node merges it under its own members. */
export interface SavedAgentPin {
  id: string;
  version: number;
  members: Readonly<Record<string, unknown>>;
}
