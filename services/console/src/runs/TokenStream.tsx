/**
 * A running LLM/Agent node's live turn (`streamNodeActivity` → `nodeActivity` deltas):
 * content as it is written, reasoning dimmed, tool calls and phases as lines. Re-subscribes
 * when the node's attempt changes (a new invocation); a refusal is shown, not swallowed.
 */
import { useEffect, useState } from 'react';
import type { NodeActivity } from '@flowline/client';
import { useClient } from '../session/session';
import { RefusalNote } from '../ui/primitives';

interface Turn {
  invocationId: string | null;
  content: string;
  reasoning: string;
  lines: string[];
  done: boolean;
}

const EMPTY: Turn = { invocationId: null, content: '', reasoning: '', lines: [], done: false };

/** Folds one delta into the turn (deltas of another invocation start a new turn). */
export function foldActivity(t: Turn, a: NodeActivity): Turn {
  const base = t.invocationId === a.invocationId ? t : { ...EMPTY, invocationId: a.invocationId };
  switch (a.type) {
    case 'content':
      return { ...base, content: base.content + (a.text ?? '') };
    case 'reasoning':
      return { ...base, reasoning: base.reasoning + (a.text ?? '') };
    case 'toolCall':
      return { ...base, lines: [...base.lines, `tool call ${a.text ?? ''}`] };
    case 'phase':
      return { ...base, lines: [...base.lines, a.text ?? 'phase'] };
    case 'terminal':
      return { ...base, done: true };
  }
}

export function TokenStream({ runId, nodeKey, attempt }: { runId: string; nodeKey: string; attempt: number }) {
  const client = useClient();
  const [turn, setTurn] = useState<Turn>(EMPTY);
  const [refusal, setRefusal] = useState<unknown>(null);
  useEffect(() => {
    let stop: (() => void) | null = null;
    let live = true;
    setTurn(EMPTY);
    setRefusal(null);
    client
      .streamNodeActivity(runId, nodeKey, (a) => setTurn((t) => foldActivity(t, a)))
      .then((s) => {
        if (live) stop = s.stop;
        else s.stop();
      })
      .catch((err: unknown) => live && setRefusal(err));
    return () => {
      live = false;
      stop?.();
    };
  }, [client, runId, nodeKey, attempt]);
  return (
    <section className="token-stream" aria-label="Live output">
      <h3>
        Live output {turn.done ? <span className="muted small">(turn ended)</span> : <span className="typing" aria-hidden="true" />}
      </h3>
      <RefusalNote error={refusal} title="No live output" />
      {turn.reasoning ? <pre className="stream-reasoning">{turn.reasoning}</pre> : null}
      {turn.lines.map((l, i) => (
        <div key={i} className="stream-line mono small">
          {l}
        </div>
      ))}
      <pre className="stream-content" aria-live="polite">
        {turn.content || (refusal ? '' : 'waiting for the first tokens…')}
      </pre>
    </section>
  );
}
