/**
 * An Agent's steps, readable: the output's `steps` (model turns, tool calls, approvals,
 * steering, in transcript order) with each tool step paired with its record in `toolCalls`
 * (the same order: the worker writes one record per tool step), so a tool call shows its
 * arguments and, when it failed, the error. The output keeps no tool result, so each tool
 * step is joined by its number to the transcript's step (read from the API, sealed at rest)
 * to show what the tool answered, opened at its first meaningful level. The list is open;
 * each tool call's arguments fold.
 */
import { useAgentTranscript } from '../api/queries';
import { JsonDoc } from '../ui/JsonDoc';
import { toolResultsByStep, type ToolResultRead } from './agent-steps-read';

interface StepEntry {
  step: number;
  kind: string;
  name?: string;
  ok?: boolean;
  toolCalls?: number;
  phase?: string;
}

interface ToolRecord {
  name: string;
  arguments?: Record<string, unknown>;
  ok: boolean;
  error?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The steps and tool records of an Agent node's output envelope's `output`, or null when it has none. */
export function agentStepsOf(output: unknown): { steps: StepEntry[]; toolCalls: ToolRecord[] } | null {
  if (!isObj(output) || !Array.isArray(output.steps)) return null;
  const steps = output.steps.filter((s): s is StepEntry => isObj(s) && typeof s.step === 'number' && typeof s.kind === 'string');
  const toolCalls = Array.isArray(output.toolCalls) ? output.toolCalls.filter((t): t is ToolRecord => isObj(t) && typeof t.name === 'string') : [];
  return { steps, toolCalls };
}

const PHASE: Record<string, string> = { requested: 'approval asked', approved: 'approved by a person', rejected: 'rejected by a person' };

/** What the tool answered: JSON opened where its content starts, or the text the model was shown. */
function ToolResult({ name, result }: { name: string; result: ToolResultRead }) {
  if (result.text !== null) {
    return (
      <div className="tool-result" aria-label={`Result of ${name}`} role="group">
        <div className="small muted">Result</div>
        {/* focusable: a long result scrolls inside its box, and a keyboard must reach it */}
        <pre className="prose-text tool-result-text" tabIndex={0}>
          {result.text}
        </pre>
      </div>
    );
  }
  const title = result.path.length > 0 ? `Result › ${result.path.join('.')}` : 'Result';
  return (
    <div className="tool-result" aria-label={`Result of ${name}`} role="group">
      <JsonDoc title={title} value={result.json} />
    </div>
  );
}

function StepLine({ s, record, rejected, result }: { s: StepEntry; record: ToolRecord | undefined; rejected: boolean; result: ToolResultRead | undefined }) {
  switch (s.kind) {
    case 'model':
      return (
        <>
          <span className="step-kind">Model turn</span>{' '}
          {s.toolCalls ? `asked for ${s.toolCalls} tool call${s.toolCalls === 1 ? '' : 's'}` : 'answered'}
        </>
      );
    case 'tool':
      return (
        <>
          <span className="step-kind">Tool call</span> <code className="tool-name">{s.name}</code>{' '}
          <span className={`chip ${s.ok ? 'chip-ok' : rejected ? 'chip-warn' : 'chip-fail'}`}>{s.ok ? 'ok' : rejected ? 'not run' : 'failed'}</span>
          {record?.error ? <div className="step-error">{record.error}</div> : null}
          {record?.arguments ? <JsonDoc title="Arguments" value={record.arguments} open={false} expandAll /> : null}
          {result && s.ok ? <ToolResult name={s.name ?? 'the tool'} result={result} /> : null}
        </>
      );
    case 'approval':
      return (
        <>
          <span className="step-kind">Approval</span> <code className="tool-name">{s.name}</code> {PHASE[s.phase ?? ''] ?? s.phase}
        </>
      );
    case 'steer':
      return <span className="step-kind">Steering message applied</span>;
    default:
      return <span className="step-kind">{s.kind}</span>;
  }
}

export function AgentSteps({ runId, nodeKey, attempt, output }: { runId: string; nodeKey: string; attempt: number; output: unknown }) {
  const parsed = agentStepsOf(output);
  const hasTools = parsed?.steps.some((s) => s.kind === 'tool') ?? false;
  const transcript = useAgentTranscript(runId, nodeKey, attempt, hasTools);
  if (!parsed || parsed.steps.length === 0) return null;
  const results = toolResultsByStep(transcript.data ?? []);
  // the k-th tool step is the k-th record of toolCalls; a tool step right after a rejection is the refusal handed to the model
  let k = 0;
  const rows = parsed.steps.map((s, i) => ({
    s,
    record: s.kind === 'tool' ? parsed.toolCalls[k++] : undefined,
    rejected: s.kind === 'tool' && parsed.steps[i - 1]?.kind === 'approval' && parsed.steps[i - 1]?.phase === 'rejected',
  }));
  const tools = rows.filter((r) => r.s.kind === 'tool').length;
  const turns = rows.filter((r) => r.s.kind === 'model').length;
  return (
    <details className="agent-steps" open>
      <summary>
        <span className="json-doc-title">Agent steps</span>{' '}
        <span className="muted small">
          {turns} model turn{turns === 1 ? '' : 's'} · {tools} tool call{tools === 1 ? '' : 's'}
        </span>
      </summary>
      <ol aria-label="Agent steps">
        {rows.map(({ s, record, rejected }) => (
          <li key={s.step} data-step-kind={s.kind} data-step={s.step}>
            <span className="step-no mono muted">#{s.step}</span>
            <div className="step-body">
              <StepLine s={s} record={record} rejected={rejected} result={results.get(s.step)} />
            </div>
          </li>
        ))}
      </ol>
    </details>
  );
}
