/**
 * The running model node of a conversation's run, in the chat: its live output as it is
 * written (the run page's token stream) and a steer box, so a person can correct the node while
 * it works without leaving the conversation. A steer's text also lands in the conversation (the
 * API posts it), so the thread shows what was said. Steering needs the `operate` scope; a key
 * without it sees the live output only, and a refused steer is shown, never swallowed.
 */
import { useId, useState } from 'react';
import type { NodeRunSummary } from '@flowline/client';
import { useAct } from '../runs/acts';
import { TokenStream } from '../runs/TokenStream';
import { useCan } from '../session/session';
import { RefusalNote } from '../ui/primitives';

export function ChatLive({ runId, node, onSteered }: { runId: string; node: NodeRunSummary; onSteered(): void }) {
  const canSteer = useCan('operate');
  const [text, setText] = useState('');
  const id = useId();
  const steer = useAct(runId, (c, operationId, message: string) => c.runs.steer(runId, node.nodeKey, { operationId, message }, { idempotencyKey: operationId }));
  return (
    <div className="chat-live" data-node-key={node.nodeKey}>
      {/* activity streams only while the node runs: a queued one waits for a worker */}
      {node.status === 'Running' ? (
        <TokenStream runId={runId} nodeKey={node.nodeKey} attempt={node.attempt} />
      ) : (
        <p className="muted small">
          <code>{node.nodeKey}</code> is queued: waiting for a model worker to take it.
        </p>
      )}
      {canSteer ? (
        <form
          className="steer-box"
          onSubmit={(e) => {
            e.preventDefault();
            if (!text.trim()) return;
            void steer.runAsync(text).then((ok) => {
              if (!ok) return;
              setText('');
              onSteered();
            });
          }}
        >
          <label htmlFor={id} className="small">
            Steer <code>{node.nodeKey}</code> while it works
          </label>
          <div className="composer-row">
            <textarea id={id} rows={2} value={text} placeholder="e.g. keep it to three sentences" onChange={(e) => setText(e.target.value)} />
            <button type="submit" className="btn btn-sm" disabled={steer.pending || !text.trim()}>
              Steer
            </button>
          </div>
          <RefusalNote error={steer.error} title="Not steered" />
        </form>
      ) : null}
    </div>
  );
}
