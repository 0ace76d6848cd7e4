// The header's help button, the keyboard shortcuts, the help dialog and the first-run tour, in
// one place the shell mounts once. The tour opens by itself only after the backend's remembered
// state has arrived and says it was never seen (so it never flashes up for a returning user).
import { useCallback, useMemo, useState } from 'react';
import { VIEWS } from '../views/registry.ts';
import { useShortcuts, viewShortcuts } from './shortcuts.ts';
import { HelpDialog } from './HelpDialog.tsx';
import { TOUR_SEEN_KEY, Tour } from './Tour.tsx';
import { isBoolean, useUiState, useUiStateLoaded } from './ui-state.ts';

export function ShortcutsAndTour() {
  const shortcuts = useMemo(() => viewShortcuts(VIEWS), []);
  const [open, setOpen] = useState<'help' | 'tour' | null>(null);
  const loaded = useUiStateLoaded();
  const [seen, setSeen] = useUiState(TOUR_SEEN_KEY, false, isBoolean);
  const openHelp = useCallback(() => setOpen('help'), []);
  useShortcuts(shortcuts, openHelp);

  const showTour = open === 'tour' || (open === null && loaded && !seen);
  return (
    <>
      <button className="ghost" onClick={openHelp} aria-keyshortcuts="?" aria-label="Help: keyboard shortcuts and tour (?)" data-testid="help-button" title="Keyboard shortcuts and tour (?)">
        ?
      </button>
      {open === 'help' && <HelpDialog shortcuts={shortcuts} onClose={() => setOpen(null)} onTour={() => setOpen('tour')} />}
      {showTour && (
        <Tour
          onClose={() => {
            setSeen(true);
            setOpen(null);
          }}
        />
      )}
    </>
  );
}
