/**
 * A node waiting on a person, answered from the PINNED graph (a definition edited since
 * could offer a decision this run's gate would refuse): a Pause offers its
 * `allowedDecisions` with a comment (required when `requireComment`); a ChatInput takes a
 * text answer; an Agent's tool call is approved (as asked or with edited arguments) or rejected
 * (ToolCallDecision). Needs the `run` scope; without it the panel only says what it waits for.
 */
import { useId, useState } from 'react';
import type { NodeRunDetail } from '@flowline/client';
import type { DocNode } from '../definitions/graph-doc';
import { useCan } from '../session/session';
import { RefusalNote } from '../ui/primitives';
import { useAct } from './acts';
import { ToolCallDecision } from './ToolCallDecision';

function decisionsOf(config: Record<string, unknown>): string[] {
  const list = Array.isArray(config.allowedDecisions) ? config.allowedDecisions.filter((d): d is string => typeof d === 'string') : [];
  return list.length > 0 ? list : ['Approve', 'Reject'];
}

export function DecisionPanel({
  runId,
  docNode,
  pendingDecisionKind,
  pendingToolCall,
}: {
  runId: string;
  docNode: DocNode;
  pendingDecisionKind: string | null;
  /** an Agent's tool call waiting for a person (GET node's `pendingToolCall`) */
  pendingToolCall?: NodeRunDetail['pendingToolCall'];
}) {
  const canDecide = useCan('run');
  const [comment, setComment] = useState('');
  const [answer, setAnswer] = useState('');
  const id = useId();
  const decide = useAct(runId, (c, operationId, a: { decision: string; comment?: string; payload?: unknown }) =>
    c.runs.decide(runId, docNode.key, { operationId, ...a }, { idempotencyKey: operationId }),
  );
  const prompt = typeof docNode.config.prompt === 'string' ? docNode.config.prompt : null;
  const isChat = pendingDecisionKind === 'Answer' || docNode.kind === 'ChatInput';

  if (pendingDecisionKind === 'ToolCall') return <ToolCallDecision key={pendingToolCall?.step ?? 'reading'} runId={runId} nodeKey={docNode.key} call={pendingToolCall} />;
  if (pendingDecisionKind === 'Operator') {
    return (
      <section className="decision card-inset" aria-label="Held decision">
        <h3>Held below its confidence threshold</h3>
        <p className="muted">Retry the node, or override one of its out-edges, to let the run go on.</p>
      </section>
    );
  }
  if (!canDecide) {
    return (
      <section className="decision card-inset" aria-label="Decision">
        <h3>{isChat ? 'Waiting for an answer' : 'Waiting for a decision'}</h3>
        {prompt ? <p className="decision-prompt">{prompt}</p> : null}
        <p className="muted small">This key cannot decide (it lacks the run scope).</p>
      </section>
    );
  }
  if (isChat) {
    return (
      <form
        className="decision card-inset"
        aria-label="Answer"
        onSubmit={(e) => {
          e.preventDefault();
          if (answer.trim()) decide.run({ decision: 'Answer', payload: { text: answer } });
        }}
      >
        <h3>Waiting for an answer</h3>
        {prompt ? <p className="decision-prompt">{prompt}</p> : null}
        <label htmlFor={`${id}-answer`}>Your answer</label>
        <textarea id={`${id}-answer`} rows={3} value={answer} onChange={(e) => setAnswer(e.target.value)} />
        <RefusalNote error={decide.error} title="The answer was refused" />
        <div className="decision-buttons">
          <button type="submit" className="btn btn-primary" disabled={decide.pending || !answer.trim()}>
            Send answer
          </button>
        </div>
      </form>
    );
  }
  const requireComment = docNode.config.requireComment === true;
  const missingComment = requireComment && comment.trim() === '';
  return (
    <section className="decision card-inset" aria-label="Decision">
      <h3>Waiting for a decision</h3>
      {prompt ? <p className="decision-prompt">{prompt}</p> : null}
      <label htmlFor={`${id}-comment`}>
        Comment {requireComment ? <span className="required">(required)</span> : <span className="muted">(optional)</span>}
      </label>
      <textarea id={`${id}-comment`} rows={2} value={comment} onChange={(e) => setComment(e.target.value)} aria-required={requireComment || undefined} />
      <RefusalNote error={decide.error} title="The decision was refused" />
      <div className="decision-buttons">
        {decisionsOf(docNode.config).map((d) => (
          <button
            key={d}
            type="button"
            className={`btn ${d === 'Approve' ? 'btn-approve' : d === 'Reject' ? 'btn-reject' : 'btn-primary'}`}
            disabled={decide.pending || missingComment}
            onClick={() => decide.run({ decision: d, ...(comment.trim() ? { comment } : {}) })}
          >
            {d}
          </button>
        ))}
      </div>
      {missingComment ? <p className="muted small">This gate asks for a comment with the decision.</p> : null}
    </section>
  );
}
