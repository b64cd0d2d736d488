/** Node kinds as the console draws them: a glyph and whether a person or a model is involved. */
export const KIND_GLYPH: Record<string, string> = {
  Start: '▶',
  End: '■',
  LlmCall: '✦',
  Agent: '◎',
  Tool: '⚙',
  Condition: '◇',
  Parallel: '⇉',
  Join: '⋈',
  Pause: '‖',
  ChatInput: '✎',
  DecisionModel: '⚖',
  Loop: '↻',
  Subworkflow: '⊞',
  Wait: '◷',
};

/** Kinds whose running attempt streams tokens (`streamNodeActivity`). */
export const STREAMING_KINDS: ReadonlySet<string> = new Set(['LlmCall', 'Agent']);

/** Kinds an operator steers with a message. */
export const STEERABLE_KINDS: ReadonlySet<string> = STREAMING_KINDS;

/** Kinds decided by a person, never completed by an operator. */
export const HUMAN_KINDS: ReadonlySet<string> = new Set(['Pause', 'ChatInput']);

/** CONTRACT §1.1 default `maxAttempts` of a kind. */
export function defaultMaxAttempts(kind: string): number {
  return ['LlmCall', 'Agent', 'Tool', 'DecisionModel'].includes(kind) ? 3 : 1;
}
