// A modal dialog on the native <dialog> (showModal makes the page behind it inert, Esc closes it),
// with what the native one leaves out: Tab and Shift+Tab wrap inside it, and the focus goes back
// to where it was when the dialog opened.
import { useEffect, useRef, type ReactNode } from 'react';
import { modalOpened } from '../components/modal-open.ts';
import './dialogs.css';

const FOCUSABLE = 'button:not([disabled]), a[href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function Modal({ labelledBy, onClose, children, testId }: { labelledBy: string; onClose: () => void; children: ReactNode; testId?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const close = useRef(onClose);
  useEffect(() => {
    close.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const dialog = ref.current!;
    const before = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const closed = modalOpened();
    dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus(); // React keeps autoFocus to itself: no attribute for showModal to find
    const onCancel = (e: Event) => {
      e.preventDefault(); // React decides when it goes (and restores the focus below)
      close.current();
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Tab') return;
      const items = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)];
      if (!items.length) return;
      const first = items[0]!;
      const last = items[items.length - 1]!;
      if (e.shiftKey && (document.activeElement === first || !dialog.contains(document.activeElement))) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (document.activeElement === last || !dialog.contains(document.activeElement))) {
        e.preventDefault();
        first.focus();
      }
    };
    dialog.addEventListener('cancel', onCancel);
    dialog.addEventListener('keydown', onKey);
    return () => {
      dialog.removeEventListener('cancel', onCancel);
      dialog.removeEventListener('keydown', onKey);
      dialog.close();
      closed();
      if (before && before.isConnected) before.focus();
    };
  }, []);

  return (
    <dialog ref={ref} className="modal" aria-labelledby={labelledBy} data-testid={testId}>
      {children}
    </dialog>
  );
}
