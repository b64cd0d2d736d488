/**
 * An Agent parked on a tool call a person approves (`pendingDecisionKind: "ToolCall"`): the
 * tool and the arguments the model asked for, an editable copy of them, and the three answers
 * the decide route takes — Approve (run it as asked), Approve with the edited arguments
 * (`payload.arguments`, checked by the API against the tool's input schema: a refusal is drawn
 * on the field), Reject (the model is handed the refusal, with the comment). Needs the `run`
 * scope; without it the panel shows the call and says why it cannot decide.
 */
import { Suspense, lazy, useId, useState } from 'react';
import type { NodeRunDetail } from '@flowline/client';
import { refusalMessagesFor } from '../api/refusal';
import { useCan } from '../session/session';
import { JsonDoc } from '../ui/JsonDoc';
import { Loading, RefusalNote } from '../ui/primitives';
import { useAct } from './acts';

// CodeMirror loads only when a tool call is on screen: the run view's own chunk stays small
const JsonEditor = lazy(() => import('../editor/inspector/JsonEditor').then((m) => ({ default: m.JsonEditor })));

type PendingToolCall = NonNullable<NodeRunDetail['pendingToolCall']>;

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

interface ToolCallAnswer {
  decision: 'Approve' | 'Reject';
  comment?: string;
  payload?: { arguments: Record<string, unknown> };
}

export function ToolCallDecision({ runId, nodeKey, call }: { runId: string; nodeKey: string; call: PendingToolCall | null | undefined }) {
  const canDecide = useCan('run');
  const id = useId();
  const [edited, setEdited] = useState<unknown>(call?.arguments);
  const [textError, setTextError] = useState<string | null>(null);
  const [comment, setComment] = useState('');
  // once a decision is accepted the buttons stay off: the node leaves this state when the dispatcher applies it
  const [sent, setSent] = useState<string | null>(null);
  const decide = useAct(runId, (c, operationId, a: ToolCallAnswer) => c.runs.decide(runId, nodeKey, { operationId, ...a }, { idempotencyKey: operationId }));

  if (!call) {
    return (
      <section className="decision card-inset" aria-label="Tool call approval">
        <h3>A tool call waits for approval</h3>
        <Loading label="Reading the tool call" />
      </section>
    );
  }
  const objectEdited = edited !== null && typeof edited === 'object' && !Array.isArray(edited);
  const changed = objectEdited && !sameJson(edited, call.arguments);
  // a 400 about the edited arguments belongs on the field; any other refusal under the buttons
  const fieldProblems = refusalMessagesFor(decide.error, 'payload.arguments');
  const editHelp = textError
    ? undefined
    : !objectEdited
      ? 'The arguments must be a JSON object.'
      : call.inputSchema
        ? 'Checked against the tool’s input schema when you approve.'
        : 'This tool declares no input schema: the arguments are sent as written.';
  const withComment = comment.trim() ? { comment } : {};
  const answer = (a: ToolCallAnswer, label: string) => void decide.runAsync(a).then((ok) => ok && setSent(label));
  const off = decide.pending || sent !== null;

  return (
    <section className="decision card-inset tool-call" aria-label="Tool call approval" data-tool-call={call.tool}>
      <h3>A tool call waits for approval</h3>
      <p className="decision-prompt">
        The agent asks to run <code className="tool-name">{call.tool}</code>
      </p>
      <JsonDoc title="Arguments the model asked for" value={call.arguments} expandAll />
      {call.inputSchema ? <JsonDoc title="The tool’s input schema" value={call.inputSchema} open={false} expandAll /> : null}
      {canDecide ? (
        <>
          <Suspense fallback={<Loading label="Opening the arguments editor" />}>
            <JsonEditor
              id={`${id}-args`}
              label="Arguments to run it with"
              value={call.arguments}
              onChange={(v) => {
                setEdited(v);
                if (fieldProblems.length > 0) decide.reset();
              }}
              onTextError={setTextError}
              minLines={3}
              testId="tool-call-arguments"
              problems={fieldProblems}
              {...(editHelp ? { help: editHelp } : {})}
            />
          </Suspense>
          <label htmlFor={`${id}-comment`}>
            Comment <span className="muted">(optional; a rejection hands it to the model)</span>
          </label>
          <textarea id={`${id}-comment`} rows={2} value={comment} onChange={(e) => setComment(e.target.value)} />
          {fieldProblems.length > 0 ? null : <RefusalNote error={decide.error} title="The decision was refused" />}
          {fieldProblems.length > 0 ? (
            <p className="field-error" role="alert">
              The edited arguments were refused: the call waits for another decision.
            </p>
          ) : null}
          <div className="decision-buttons">
            <button type="button" className="btn btn-approve" disabled={off} onClick={() => answer({ decision: 'Approve', ...withComment }, 'Approved')}>
              Approve
            </button>
            <button
              type="button"
              className="btn btn-primary"
              disabled={off || !changed || textError !== null}
              title={textError ? 'The arguments are not JSON' : !changed ? 'Edit the arguments first' : undefined}
              onClick={() => answer({ decision: 'Approve', ...withComment, payload: { arguments: edited as Record<string, unknown> } }, 'Approved with the edited arguments')}
            >
              Approve with edited arguments
            </button>
            <button type="button" className="btn btn-reject" disabled={off} onClick={() => answer({ decision: 'Reject', ...withComment }, 'Rejected')}>
              Reject
            </button>
          </div>
          {sent ? (
            <p className="small" role="status">
              {sent}: the agent goes on once the decision is applied.
            </p>
          ) : null}
        </>
      ) : (
        <p className="muted small">This key cannot decide (it lacks the run scope).</p>
      )}
    </section>
  );
}
