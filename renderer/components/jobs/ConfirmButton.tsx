// A button whose action is asked about first, in the app's Modal: what will happen, then Cancel or
// the action's own name. While the action runs the button is busy; a refusal (an entry gone
// meanwhile, Redis away) is shown in the dialog's place under the button.
import { useId, useState, type ReactNode } from 'react';
import { Modal } from '../../app/Modal.tsx';

export function ConfirmButton({ label, title, question, confirmLabel, danger, run, onDone, disabledReason, testId, className }: {
  /** The button's text. */
  label: ReactNode;
  /** Its accessible name when the text alone is ambiguous (one per row). */
  title?: string;
  question: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  run(): Promise<unknown>;
  onDone?(): void;
  /** When set, the button is not offered for this reason (kept focusable, as aria-disabled). */
  disabledReason?: string;
  testId?: string;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const h = useId();
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      await run();
      setAsking(false);
      onDone?.();
    } catch (err) {
      setAsking(false);
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const off = disabledReason !== undefined || busy;
  return (
    <>
      <button
        className={className ?? `ghost${danger ? ' danger' : ''}`}
        aria-label={title}
        aria-disabled={off}
        title={disabledReason}
        onClick={() => !off && setAsking(true)}
        data-testid={testId}
      >
        {label}
      </button>
      {error && <span className="error small" role="alert" data-testid="action-error">{error}</span>}
      {asking && (
        <Modal labelledBy={h} onClose={() => !busy && setAsking(false)} testId="confirm-dialog">
          <h2 id={h}>{confirmLabel}?</h2>
          <p>{question}</p>
          <div className="actions">
            <button className="ghost" onClick={() => setAsking(false)} disabled={busy} data-autofocus data-testid="confirm-cancel">Cancel</button>
            <button className={danger ? 'danger' : undefined} onClick={() => void go()} disabled={busy} data-testid="confirm-ok">{confirmLabel}</button>
          </div>
        </Modal>
      )}
    </>
  );
}
