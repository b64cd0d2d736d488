/**
 * What a node's output document says, read for a person: the part worth opening first, a
 * gate's decision with its comment, a model node's answer and what it cost, and the prompt
 * the node was configured with. Pure readers over the documents the API already returns
 * (the output envelope, the pinned node's config); the panel draws what they find.
 */

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The first level of `value` that says something: while a document is an object with one
 * member that is itself an object or array (`{ result: { rows: [...] } }`), that member is
 * opened instead, so the panel starts where the content is. `path` names the members stepped
 * into. Scalars, arrays and objects with several members are their own first level.
 */
export function firstMeaningfulLevel(value: unknown, maxDepth = 4): { path: string[]; value: unknown } {
  const path: string[] = [];
  let at = value;
  while (path.length < maxDepth && isObj(at)) {
    const keys = Object.keys(at);
    if (keys.length !== 1) break;
    const only = at[keys[0]!];
    if (only === null || typeof only !== 'object') break;
    path.push(keys[0]!);
    at = only;
  }
  return { path, value: at };
}

/** A gate's settled decision: Approve/Reject (or a ChatInput's answer), the person's comment, the payload they attached. */
export interface DecisionRead {
  decision: string;
  comment: string | null;
  payload: unknown;
  /** a policy Pause: how the approval settled (quorum, veto, timeout), when it says */
  by: string | null;
}

/** The decision a Pause, Approval or ChatInput's output holds, or null when it holds none. */
export function decisionOf(output: unknown): DecisionRead | null {
  if (!isObj(output) || typeof output.decision !== 'string') return null;
  const approval = isObj(output.approval) ? output.approval : null;
  return {
    decision: output.decision,
    comment: typeof output.comment === 'string' && output.comment.trim() !== '' ? output.comment : null,
    payload: output.payload ?? null,
    by: approval && typeof approval.by === 'string' ? approval.by : null,
  };
}

/** A model node's answer: its text, the JSON it parsed (when asked for), and its usage figures. */
export interface AnswerRead {
  text: string | null;
  json: unknown;
  model: string | null;
  /** "812 in · 64 out · 1.2 s · stop" — the usage members the provider reported */
  usage: string | null;
  reasoning: string | null;
  /** a DecisionModel's label and how sure the model was */
  choice: { label: string; confidence: number | null } | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The usage line of a model answer's `usage`, or null when it reports nothing. */
export function usageLine(usage: unknown): string | null {
  if (!isObj(usage)) return null;
  const parts: string[] = [];
  const inT = num(usage.inputTokens);
  const outT = num(usage.outputTokens);
  const ms = num(usage.durationMs);
  if (inT !== null) parts.push(`${inT.toLocaleString('en')} in`);
  if (outT !== null) parts.push(`${outT.toLocaleString('en')} out`);
  if (ms !== null) parts.push(ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
  if (typeof usage.finishReason === 'string') parts.push(usage.finishReason);
  return parts.length > 0 ? parts.join(' · ') : null;
}

/** The answer an LlmCall, DecisionModel or Agent output carries, or null when it has no text, JSON nor choice. */
export function answerOf(output: unknown): AnswerRead | null {
  if (!isObj(output)) return null;
  const text = typeof output.text === 'string' ? output.text : null;
  const json = output.json ?? null;
  const choice = typeof output.choice === 'string' ? { label: output.choice, confidence: num(output.confidence) } : null;
  if (text === null && json === null && choice === null) return null;
  const usage = isObj(output.usage) ? output.usage : null;
  return {
    text,
    json,
    model: usage && typeof usage.model === 'string' ? usage.model : null,
    usage: usageLine(usage),
    choice,
    reasoning: typeof output.reasoning === 'string' && output.reasoning.trim() !== '' ? output.reasoning : Array.isArray(output.reasoning) ? output.reasoning.filter((r) => typeof r === 'string').join('\n\n') || null : null,
  };
}

/** The prompt members of a model node's config, in the order the model reads them. */
const PROMPT_MEMBERS: Record<string, Array<{ key: string; label: string }>> = {
  LlmCall: [
    { key: 'systemPrompt', label: 'System' },
    { key: 'prompt', label: 'Prompt' },
  ],
  DecisionModel: [{ key: 'question', label: 'Question' }],
  Agent: [
    { key: 'systemPrompt', label: 'System' },
    { key: 'instructions', label: 'Instructions' },
  ],
};

/** The configured prompt texts of a model node (templates as written; the worker fills them from the input document). */
export function promptOf(kind: string, config: Record<string, unknown> | undefined): Array<{ label: string; text: string }> {
  return (PROMPT_MEMBERS[kind] ?? []).flatMap(({ key, label }) => {
    const text = config?.[key];
    return typeof text === 'string' && text.trim() !== '' ? [{ label, text }] : [];
  });
}
