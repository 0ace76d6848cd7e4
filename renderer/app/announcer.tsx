// One polite live region for the whole page: screen readers hear changes of state (a new alert,
// live/paused, sampling failing or back) when the user pauses, never each sample or clock tick.
// Regions that rewrite themselves on every poll must not be live; they call announce() on change.
import { useEffect, useRef, useSyncExternalStore } from 'react';

let message = { text: '', seq: 0 };
const listeners = new Set<() => void>();

export function announce(text: string): void {
  message = { text, seq: message.seq + 1 };
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** Announces `text` whenever it changes after the first render (the state the page opened in is
 *  already on screen); null announces nothing. */
export function useAnnounceChange(text: string | null): void {
  const last = useRef<string | null | undefined>(undefined);
  useEffect(() => {
    if (last.current !== undefined && text !== null && text !== last.current) announce(text);
    last.current = text;
  }, [text]);
}

export function LiveAnnouncer() {
  const m = useSyncExternalStore(subscribe, () => message);
  // A new element per message: the same words said twice are announced twice.
  return (
    <div className="sr-only" role="status" aria-live="polite" aria-atomic="true" data-testid="live-announcer" data-seq={m.seq}>
      <p key={m.seq}>{m.text}</p>
    </div>
  );
}
