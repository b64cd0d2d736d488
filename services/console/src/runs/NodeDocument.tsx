/**
 * A node's documents read as an answer to "what happened": the configured prompt of a model
 * node, its answer (text as text, the parsed JSON, the model and what it cost), a gate's
 * decision with the person's comment, an Agent's steps with its tool results, then the output opened at its first
 * level that says something. The whole envelope and the input stay one click away.
 */
import type { NodeRunDetail } from '@flowline/client';
import type { DocNode } from '../definitions/graph-doc';
import { JsonDoc } from '../ui/JsonDoc';
import { AgentSteps } from './AgentSteps';
import { answerOf, decisionOf, firstMeaningfulLevel, promptOf, type AnswerRead, type DecisionRead } from './node-document';

function PromptSection({ kind, docNode }: { kind: string; docNode: DocNode | undefined }) {
  const parts = promptOf(kind, docNode?.config);
  if (parts.length === 0) return null;
  return (
    <section className="doc-section" aria-label="Prompt">
      <h3>Prompt</h3>
      <p className="muted small">As configured; the worker fills its placeholders from the input document.</p>
      {parts.map((p) => (
        <div key={p.label} className="prompt-part">
          <div className="prompt-label small muted">{p.label}</div>
          <pre className="prose-text">{p.text}</pre>
        </div>
      ))}
    </section>
  );
}

function AnswerSection({ answer }: { answer: AnswerRead }) {
  return (
    <section className="doc-section" aria-label="Answer">
      <h3>Answer</h3>
      {answer.choice ? (
        <p data-choice={answer.choice.label}>
          <span className="chip chip-accent">{answer.choice.label}</span>
          {answer.choice.confidence !== null ? <span className="muted small"> confidence {(answer.choice.confidence * 100).toFixed(0)} %</span> : null}
        </p>
      ) : null}
      {answer.text ? <div className="prose-text answer-text">{answer.text}</div> : null}
      {answer.json !== null ? <JsonDoc title="Parsed JSON" value={answer.json} expandAll /> : null}
      {answer.reasoning ? (
        <details className="reasoning">
          <summary className="small">Reasoning</summary>
          <div className="prose-text">{answer.reasoning}</div>
        </details>
      ) : null}
      {answer.model || answer.usage ? (
        <p className="muted small answer-usage">
          {answer.model ? <span className="mono">{answer.model}</span> : null}
          {answer.model && answer.usage ? ' · ' : null}
          {answer.usage}
        </p>
      ) : null}
    </section>
  );
}

function DecisionSection({ decision, kind }: { decision: DecisionRead; kind: string }) {
  const tone = decision.decision === 'Approve' ? 'chip-ok' : decision.decision === 'Reject' ? 'chip-fail' : 'chip-accent';
  return (
    <section className="doc-section" aria-label="Decision">
      <h3>{kind === 'ChatInput' ? 'Answer' : 'Decision'}</h3>
      <p>
        <span className={`chip ${tone}`} data-decision={decision.decision}>
          {decision.decision}
        </span>
        {decision.by ? <span className="muted small"> by {decision.by}</span> : null}
      </p>
      {decision.comment ? <blockquote className="decision-comment prose-text">{decision.comment}</blockquote> : <p className="muted small">No comment.</p>}
      {decision.payload !== null ? <JsonDoc title="Payload" value={decision.payload} expandAll /> : null}
    </section>
  );
}

/** The output opened where its content starts; its path says which members were stepped into. */
function OutputSection({ d }: { d: NodeRunDetail }) {
  if (!d.output) return <JsonDoc title="Output" value={null} emptyText="no output yet" />;
  const first = firstMeaningfulLevel(d.output.output);
  const title = first.path.length > 0 ? `Output › ${first.path.join('.')}` : 'Output';
  return (
    <>
      <JsonDoc title={title} value={first.value} emptyText="null" />
      <p className="muted small output-facts">
        {d.output.status} · attempt {d.output.attempt}
        {d.output.branch ? <> · branch <span className="mono">{d.output.branch}</span></> : null}
      </p>
      <JsonDoc title="Whole output document" value={d.output} open={false} />
    </>
  );
}

export function NodeDocument({ runId, kind, docNode, d }: { runId: string; kind: string; docNode: DocNode | undefined; d: NodeRunDetail }) {
  const inner = d.output?.output;
  const answer = kind === 'LlmCall' || kind === 'DecisionModel' || kind === 'Agent' ? answerOf(inner) : null;
  const decision = decisionOf(inner);
  return (
    <div className="docs">
      <PromptSection kind={kind} docNode={docNode} />
      {kind === 'Agent' ? <AgentSteps runId={runId} nodeKey={d.nodeKey} attempt={d.attempt} output={inner} /> : null}
      {answer ? <AnswerSection answer={answer} /> : null}
      {decision ? <DecisionSection decision={decision} kind={kind} /> : null}
      <OutputSection d={d} />
      {d.error ? <JsonDoc title="Error" value={d.error} /> : null}
      <JsonDoc title="Input" value={d.input} open={false} emptyText="not composed yet" />
    </div>
  );
}
