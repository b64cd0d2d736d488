/** A modal dialog on the native `<dialog>` element: focus is trapped and Escape closes it. */
import { useEffect, useId, useRef, type ReactNode } from 'react';

export function Dialog({ title, onClose, children, wide }: { title: string; onClose(): void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (typeof d.showModal === 'function' && !d.open) d.showModal();
    else d.setAttribute('open', '');
    const onCancel = (e: Event) => {
      e.preventDefault();
      onClose();
    };
    d.addEventListener('cancel', onCancel);
    return () => d.removeEventListener('cancel', onCancel);
  }, [onClose]);
  return (
    <dialog ref={ref} className={`dialog${wide ? ' dialog-wide' : ''}`} aria-labelledby={titleId}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
          ✕
        </button>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}

/**
 * A dialog's two buttons: the way back on the left, the action on the right. The action submits
 * the dialog's form unless `onAct` is given; `tone` is its button style (`btn-primary`,
 * `btn-danger`, `btn-reject`).
 */
export function DialogActions({
  back,
  onBack,
  act,
  onAct,
  tone = 'btn-primary',
  disabled,
}: {
  back: string;
  onBack(): void;
  act: ReactNode;
  onAct?: () => void;
  tone?: string;
  disabled?: boolean;
}) {
  return (
    <div className="dialog-actions">
      <button type="button" className="btn btn-ghost" onClick={onBack}>
        {back}
      </button>
      <button type={onAct ? 'button' : 'submit'} className={`btn ${tone}`} onClick={onAct} disabled={disabled}>
        {act}
      </button>
    </div>
  );
}

/** A read-only dialog's one button, closing it. */
export function DialogDone({ onClose }: { onClose(): void }) {
  return (
    <div className="dialog-actions">
      <button type="button" className="btn btn-primary" onClick={onClose}>
        Done
      </button>
    </div>
  );
}
