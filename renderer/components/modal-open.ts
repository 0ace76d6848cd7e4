// Whether a modal dialog is open, for the content a modal leaves exposed. showModal() makes the page
// behind the dialog inert, and Chromium then drops it from its accessibility tree, except a canvas's
// fallback content (the charts' text alternatives): that stays reachable under an open dialog, and
// so does it under an `inert` attribute (checked with CDP's Accessibility.getFullAXTree; aria-hidden
// does hide it). The charts read this to hide theirs while a dialog is open.
import { useSyncExternalStore } from 'react';

let open = 0;
const listeners = new Set<() => void>();

/** Called by the modal as it opens; the function it returns, as it closes. */
export function modalOpened(): () => void {
  open++;
  listeners.forEach((l) => l());
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    open--;
    listeners.forEach((l) => l());
  };
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => void listeners.delete(l);
};

export function useModalOpen(): boolean {
  return useSyncExternalStore(subscribe, () => open > 0);
}
