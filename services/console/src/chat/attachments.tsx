/**
 * Attachments on the chat page: the composer's file picker (each file is uploaded as soon as
 * it is chosen, so a refusal shows before the message is written), the chips that list a
 * message's files, and, in the run card, which files reached the model and which were skipped.
 */
import { useId, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { Attachment, NodeRunDetail, RunDetail } from '@flowline/client';
import { useNodeDetail } from '../api/queries';
import { readGraphDoc } from '../definitions/graph-doc';
import { RefusalNote } from '../ui/primitives';

/** True when the Chat graph takes files with a message (`chat.acceptsAttachments: true`). */
export function acceptsAttachments(graph: unknown): boolean {
  const chat = graph && typeof graph === 'object' ? (graph as { chat?: unknown }).chat : undefined;
  return !!chat && typeof chat === 'object' && (chat as { acceptsAttachments?: unknown }).acceptsAttachments === true;
}

/** A byte count a person reads at a glance: 512 B, 1.5 KB, 2.3 MB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** One file's chip: name, kind and size; `onRemove` adds a remove button named after the file. */
export function AttachmentChip({ a, onRemove }: { a: Pick<Attachment, 'name' | 'kind' | 'bytes'>; onRemove?: () => void }) {
  return (
    <li className="attachment-chip" data-kind={a.kind}>
      <span className="attachment-name">{a.name}</span>
      <span className="attachment-meta">
        {a.kind} · {formatBytes(a.bytes)}
      </span>
      {onRemove ? (
        <button type="button" className="chip-remove" aria-label={`Remove ${a.name}`} onClick={onRemove}>
          ×
        </button>
      ) : null}
    </li>
  );
}

export function AttachmentList({ items, label }: { items: Attachment[]; label: string }) {
  if (items.length === 0) return null;
  return (
    <ul className="attachment-list" aria-label={label}>
      {items.map((a) => (
        <AttachmentChip key={a.fileId} a={a} />
      ))}
    </ul>
  );
}

/** A file chosen in the composer: uploading, uploaded (`file` set) or refused (`error` set). */
interface Pending {
  localId: string;
  name: string;
  bytes: number;
  file: Attachment | null;
  error: unknown;
}

/**
 * The composer's pending attachments. `ready` is what a send carries; `busy` is true while an
 * upload is still going (a send then would silently leave that file out).
 */
export function usePendingAttachments(upload: (blob: Blob, name: string) => Promise<Attachment>) {
  const [items, setItems] = useState<Pending[]>([]);
  const patch = (localId: string, p: Partial<Pending>) => setItems((xs) => xs.map((x) => (x.localId === localId ? { ...x, ...p } : x)));
  const up = useMutation({
    mutationFn: ({ blob, name }: { localId: string; blob: Blob; name: string }) => upload(blob, name),
    onSuccess: (file, v) => patch(v.localId, { file }),
    onError: (error, v) => patch(v.localId, { error }),
  });
  return {
    items,
    ready: items.flatMap((x) => (x.file ? [x.file] : [])),
    busy: items.some((x) => !x.file && !x.error),
    add(files: FileList | null) {
      for (const f of files ? [...files] : []) {
        const localId = crypto.randomUUID();
        setItems((xs) => [...xs, { localId, name: f.name, bytes: f.size, file: null, error: null }]);
        up.mutate({ localId, blob: f, name: f.name });
      }
    },
    remove: (localId: string) => setItems((xs) => xs.filter((x) => x.localId !== localId)),
    clear: () => setItems([]),
  };
}

/** The "Attach files" control and the chips of the files chosen so far. */
export function AttachmentPicker({ pending }: { pending: ReturnType<typeof usePendingAttachments> }) {
  const id = useId();
  return (
    <div className="attach">
      <label htmlFor={id} className="btn btn-sm attach-label">
        Attach files
      </label>
      {/* visually hidden but focusable: the label is the visible control, the input keeps keyboard access */}
      <input
        id={id}
        type="file"
        multiple
        className="attach-input"
        onChange={(e) => {
          pending.add(e.target.files);
          e.target.value = '';
        }}
      />
      {pending.items.length > 0 ? (
        <ul className="attachment-list" aria-label="Attachments to send">
          {pending.items.map((p) =>
            p.error ? (
              <li key={p.localId} className="attachment-refused">
                <RefusalNote error={p.error} title={`Not attached: ${p.name}`} />
                <button type="button" className="chip-remove" aria-label={`Dismiss ${p.name}`} onClick={() => pending.remove(p.localId)}>
                  ×
                </button>
              </li>
            ) : p.file ? (
              <AttachmentChip key={p.localId} a={p.file} onRemove={() => pending.remove(p.localId)} />
            ) : (
              <li key={p.localId} className="attachment-chip is-uploading" aria-busy="true">
                <span className="attachment-name">{p.name}</span>
                <span className="attachment-meta">uploading · {formatBytes(p.bytes)}</span>
              </li>
            ),
          )}
        </ul>
      ) : null}
    </div>
  );
}

/** The LLM nodes of the run that were asked to read the message's files (`includeAttachments: true`). */
function attachmentReaders(detail: RunDetail): string[] {
  const doc = readGraphDoc(detail.graph);
  return detail.nodeRuns
    .filter((n) => n.status === 'Succeeded' && (n.kind === 'LlmCall' || n.kind === 'Agent'))
    .filter((n) => doc.nodes.find((x) => x.key === n.nodeKey)?.config.includeAttachments === true)
    .map((n) => n.nodeKey);
}

/**
 * What one node's model got: the run input's files minus the names the worker reported in
 * `attachmentsSkipped` (files it could not read: missing, empty, or not of their declared kind).
 * The worker reports names only, so the reason is the general one, not per file.
 */
export function receivedBy(node: NodeRunDetail): { received: string[]; skipped: string[] } | null {
  const input = node.input?.run.input;
  const refs = input && typeof input === 'object' ? (input as { attachments?: unknown }).attachments : undefined;
  const names = Array.isArray(refs) ? refs.flatMap((r) => (r && typeof r === 'object' && typeof (r as { name?: unknown }).name === 'string' ? [(r as { name: string }).name] : [])) : [];
  if (names.length === 0) return null;
  const out = node.output?.output;
  const raw = out && typeof out === 'object' ? (out as { attachmentsSkipped?: unknown }).attachmentsSkipped : undefined;
  const skipped = Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : [];
  // two files can share a name: each skipped name takes out one file
  const left = [...skipped];
  const received = names.filter((n) => {
    const i = left.indexOf(n);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
  return { received, skipped };
}

function NodeReceived({ runId, nodeKey }: { runId: string; nodeKey: string }) {
  const node = useNodeDetail(runId, nodeKey, false);
  if (node.error) return <RefusalNote error={node.error} title={`Could not read ${nodeKey}`} />;
  const r = node.data ? receivedBy(node.data) : null;
  if (!r) return null;
  return (
    <div className="model-received" data-node-key={nodeKey}>
      <p className="small">
        The model received: {r.received.length > 0 ? r.received.join(', ') : 'none of the files'} <span className="muted mono">({nodeKey})</span>
      </p>
      {r.skipped.length > 0 ? (
        <p className="small attachment-skipped">
          Skipped: {r.skipped.join(', ')} <span className="muted">(the worker could not read them: missing, empty, or not of their declared kind)</span>
        </p>
      ) : null}
    </div>
  );
}

/** In the run card: per LLM node that read the attachments, which files it received and skipped. */
export function ModelReceived({ detail }: { detail: RunDetail }) {
  const readers = attachmentReaders(detail);
  if (readers.length === 0) return null;
  return (
    <section className="model-received-list" aria-label="Attachments the model received">
      {readers.map((k) => (
        <NodeReceived key={k} runId={detail.run.id} nodeKey={k} />
      ))}
    </section>
  );
}
