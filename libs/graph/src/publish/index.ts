/**
 * Chat publishing (CONTRACT §2 `publishToChat`, event `node.published`): which nodes a
 * committed plan made Succeeded whose answer becomes an assistant message of the run's
 * conversation, and the message text. Pure: the shell (services/dispatcher publish.ts)
 * writes the message and the event through libs/db after the tick's commit, guarded so a
 * node attempt is published at most once.
 */
import type { Graph, GraphNode, Json, NodeKind, OutputEnvelope, RunStatus } from '../model';
import type { PlanResult } from '../planner/types';
import { stringifyJson } from '../conditions/exact-json';

/** Kinds whose config may carry `publishToChat`. */
export const PUBLISHING_KINDS: ReadonlySet<NodeKind> = new Set(['LlmCall', 'Agent', 'End']);

/** One node attempt to publish. */
export interface Publication {
  nodeKey: string;
  attempt: number;
  /** the assistant message text; null = the output has nothing to say (the attempt is marked, no message) */
  text: string | null;
}

/**
 * True for a node that publishes its answer (CONTRACT §2): in a Chat graph, an End unless
 * it says `publishToChat: false` (absent or null = the default, true), an LlmCall or Agent
 * only with `publishToChat: true`. Nothing publishes in any other graph.
 */
export function publishesToChat(graph: Graph, node: GraphNode): boolean {
  if (graph.kind !== 'Chat' || !PUBLISHING_KINDS.has(node.kind)) return false;
  const flag = node.config.publishToChat;
  return node.kind === 'End' ? flag !== false : flag === true;
}

/** True when some node of the graph publishes (a shell may skip every other graph at no cost). */
export function graphPublishes(graph: Graph): boolean {
  return graph.nodes.some((n) => publishesToChat(graph, n));
}

/**
 * The message text of a node's output: LlmCall/Agent → `output.text`; End → `result`
 * (a string as is, anything else as JSON, numbers exact). null when there is nothing to say (a missing
 * or non-string `text`, a null `result`).
 */
export function publishedText(kind: NodeKind, output: Json): string | null {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return null;
  if (kind === 'End') {
    const result = output.result;
    if (result === undefined || result === null) return null;
    return typeof result === 'string' ? result : stringifyJson(result);
  }
  const text = output.text;
  return typeof text === 'string' ? text : null;
}

/**
 * The publication of a committed Succeeded node row (the heal path, after a lost publish):
 * its attempt and text, from the row's output envelope; null when it has no envelope.
 */
export function publicationOfRow(kind: NodeKind, nodeKey: string, attempt: number, envelope: OutputEnvelope | null): Publication | null {
  if (!envelope || envelope.status !== 'succeeded') return null;
  return { nodeKey, attempt, text: publishedText(kind, envelope.output) };
}

/**
 * The publications a committed plan calls for: every node the plan moved to Succeeded
 * whose node publishes, with the attempt it succeeded on and its text. None when the run
 * is (or becomes) Cancelling or Cancelled: a cancelled run drains without publishing.
 * `runStatusBefore` is the run's status in the snapshot the plan was made from.
 */
export function publicationsOf(graph: Graph, runStatusBefore: RunStatus, result: PlanResult): Publication[] {
  const status = result.run?.set.status ?? runStatusBefore;
  if (status === 'Cancelling' || status === 'Cancelled') return [];
  if (graph.kind !== 'Chat') return [];
  const byKey = new Map(graph.nodes.map((n) => [n.key, n]));
  const out: Publication[] = [];
  for (const patch of result.nodes) {
    if (patch.set.status !== 'Succeeded') continue;
    const node = byKey.get(patch.nodeKey);
    if (!node || !publishesToChat(graph, node)) continue;
    const envelope: OutputEnvelope | null | undefined = patch.set.output;
    if (!envelope || envelope.status !== 'succeeded') continue;
    out.push({ nodeKey: node.key, attempt: patch.set.attempt ?? patch.expect.attempt, text: publishedText(node.kind, envelope.output) });
  }
  return out;
}
